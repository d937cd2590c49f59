import { ApiProperty } from '@nestjs/swagger';
import { LegacyPageQueryDto, PageOf } from '../../../core/http/pagination.js';
import { EnumField, StringField } from '../../../core/http/validation.js';
import { ATTRIBUTE_NAME, ATTRIBUTE_TYPES, type AttributeType } from '../attribute-types.js';

/** Long enough for a JSON array of 100 strings of 1000 characters. */
export const DEFAULT_VALUE_MAX = 200_000;

const DEFAULT_VALUE_DOC =
  'Value of users without one of their own, as a string that parses as the type: `42` or `-0.5` ' +
  '(number), `true` or `false` (boolean), a JSON array such as `["a","b"]` or `[1,2]` (arrays). ' +
  'Null: no default.';

export class UserAttributeDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ATTRIBUTE_TYPES, enumName: 'UserAttributeType' }) type: AttributeType;
  @ApiProperty({ type: String, nullable: true }) displayName: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true, description: DEFAULT_VALUE_DOC }) defaultValue: string | null;
}

export class UserAttributeCreateDto {
  @StringField({
    minLength: 1,
    maxLength: 64,
    pattern: ATTRIBUTE_NAME,
    patternMessage:
      '$property must start with a letter or _ and hold only letters, digits and _ (at most 64 characters)',
    description: 'Key of the attribute, unique in the account (case-sensitive). Cannot change later.',
    example: 'region',
  })
  name: string;

  @EnumField(ATTRIBUTE_TYPES, { enumName: 'UserAttributeType', description: 'Cannot change later' })
  type: AttributeType;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) displayName?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 1000 }) description?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: DEFAULT_VALUE_MAX,
    description: DEFAULT_VALUE_DOC,
  })
  defaultValue?: string | null;
}

/** Omitted fields keep their value; null clears them. */
export class UserAttributeUpdateDto {
  @StringField({ optional: true, nullable: true, maxLength: 255 }) displayName?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 1000 }) description?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: DEFAULT_VALUE_MAX,
    description: DEFAULT_VALUE_DOC,
  })
  defaultValue?: string | null;

  @EnumField(ATTRIBUTE_TYPES, {
    optional: true,
    enumName: 'UserAttributeType',
    description: 'The type cannot change: the current type is accepted, another one is a 400',
  })
  type?: AttributeType;
}

export class UserAttributesQueryDto extends LegacyPageQueryDto {
  @StringField({ optional: true, maxLength: 64, description: 'Only the attribute with exactly this name' })
  name?: string;

  @EnumField(ATTRIBUTE_TYPES, {
    optional: true,
    enumName: 'UserAttributeType',
    description: 'Only this type',
  })
  type?: AttributeType;
}

export class UserAttributesListDto extends PageOf(UserAttributeDto, {
  legacy: 'offset',
  dataDescription: 'Same as items',
  count: { minimum: 0, description: 'Attributes matching the filters' },
}) {}
