import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsInt, Max, Min } from 'class-validator';
import { ATTRIBUTE_TYPES, type AttributeType, type AttributeValue } from '../attribute-types.js';

const MAX_ID = 2_147_483_647;

/** An id sent as an integer or as a string of one (`"42"`), as older clients send it. */
function IdRefField(description: string): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      oneOf: [
        { type: 'integer', minimum: 1, maximum: MAX_ID },
        { type: 'string', pattern: '^[1-9][0-9]{0,9}$' },
      ],
      description,
    }),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) ? Number(value) : value,
    ),
    IsInt({ message: '$property must be a positive integer, or a string holding one' }),
    Min(1),
    Max(MAX_ID),
  );
}

const VALUE_SCHEMA = {
  oneOf: [
    { type: 'string', maxLength: 1000 },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', items: { type: 'string', maxLength: 1000 }, maxItems: 100 },
    { type: 'array', items: { type: 'number' }, maxItems: 100 },
    { type: 'null' },
  ],
};

export class UserAttributeValueInputDto {
  @IdRefField('The user') userId: number;

  @IdRefField('The attribute') userAttributeId: number;

  @ApiPropertyOptional({
    ...VALUE_SCHEMA,
    description:
      'A value of the attribute’s type: string (at most 1000 characters), number, boolean, or an ' +
      'array of at most 100 strings or numbers. `null` removes the user’s own value (the default, if ' +
      'any, applies); so does leaving it out, as the reference command-line tool does ' +
      '(`cube attributes values set` sends only the two ids).',
  })
  @Allow()
  value?: AttributeValue | null;
}

export class UserAttributeValueDto {
  @ApiProperty({ type: 'integer' }) userId: number;
  @ApiProperty({ type: 'integer' }) userAttributeId: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) displayName: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: ATTRIBUTE_TYPES, enumName: 'UserAttributeType' }) type: AttributeType;
  @ApiProperty({
    ...VALUE_SCHEMA,
    description:
      'The effective value: the user’s own, else the attribute’s default parsed to its type, else null',
  })
  value: AttributeValue | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The value as text for display; array items joined with ", "',
  })
  formattedValue: string | null;
  @ApiProperty({ description: 'True when the user has no value of their own and `value` is the default' })
  isDefault: boolean;
}
