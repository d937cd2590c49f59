import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { NestedField, StringField } from '../../../core/http/validation.js';
import { PolicyDto } from './policy.dto.js';

export class RoleCreateDto {
  @StringField({ minLength: 1, maxLength: 255 }) name: string;

  @NestedField(() => PolicyDto, { isArray: true, maxItems: 200 }) policies: PolicyDto[];
}

export class RoleUpdateDto {
  @StringField({ optional: true, minLength: 1, maxLength: 255 }) name?: string;

  @NestedField(() => PolicyDto, { optional: true, isArray: true, maxItems: 200 }) policies?: PolicyDto[];
}

export class RoleDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: PolicyDto, isArray: true }) policies: PolicyDto[];
}

export class RolesListDto extends PageOf(RoleDto) {}

export class RolesQueryDto extends PageQueryDto {}
