import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../../core/http/pagination.js';
import { NestedField, StringField } from '../../../core/http/validation.js';
import {
  ENV_VAR_NAME_MAX_LENGTH,
  ENV_VAR_VALUE_MAX_LENGTH,
  ENV_VARS_PER_REQUEST,
} from '../env-vars.rules.js';

/** One variable to set (`value` a string) or remove (`value: null`). */
export class EnvVariableInputDto {
  @StringField({
    minLength: 1,
    maxLength: ENV_VAR_NAME_MAX_LENGTH,
    example: 'CUBEJS_DB_HOST',
    description: 'New names match ^[A-Za-z_][A-Za-z0-9_]*$; a name already stored may be resent as it is',
  })
  name: string;

  @StringField({
    nullable: true,
    maxLength: ENV_VAR_VALUE_MAX_LENGTH,
    example: 'db.internal',
    description: 'The value; null removes the variable. The `[ENCRYPTED]` placeholder is refused',
  })
  value: string | null;
}

export class SetEnvVariablesDto {
  @NestedField(() => EnvVariableInputDto, {
    isArray: true,
    maxItems: ENV_VARS_PER_REQUEST,
    description: 'Upserted by name; variables left out keep their values',
  })
  env_variables: EnvVariableInputDto[];
}

/** A variable as read back: secret-named ones show `[ENCRYPTED]`. */
export class EnvVariableItemDto {
  @ApiProperty({ example: 'CUBEJS_DB_HOST' }) name: string;

  @ApiProperty({
    example: 'db.internal',
    description: '`[ENCRYPTED]` when the name contains PASS, SECRET, TOKEN, KEY or CREDENTIAL',
  })
  value: string;
}

export class EnvVariablesListDto extends PageOf(EnvVariableItemDto, {
  legacy: 'data',
  nullablePageInfo: true,
}) {}
