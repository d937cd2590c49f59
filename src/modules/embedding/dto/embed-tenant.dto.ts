import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { StringField } from '../../../core/http/validation.js';

export class EmbedTenantDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Embed users in the tenant' }) userCount: number;
  @ApiProperty({ type: String, nullable: true }) displayName: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class EmbedTenantsListDto extends PageOf(EmbedTenantDto) {}

export class EmbedTenantsQueryDto extends PageQueryDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 100,
    description: 'Case-insensitive substring of the name',
  })
  search?: string | null;
}
