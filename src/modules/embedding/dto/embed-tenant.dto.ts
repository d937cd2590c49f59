import { ApiProperty } from '@nestjs/swagger';
import { PageInfoDto, PageQueryDto } from '../../../core/http/pagination.js';
import { StringField } from '../../../core/http/validation.js';

export class EmbedTenantDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Embed users in the tenant' }) userCount: number;
  @ApiProperty({ type: String, nullable: true }) displayName: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class EmbedTenantsListDto {
  @ApiProperty({ type: EmbedTenantDto, isArray: true }) items: EmbedTenantDto[];
  @ApiProperty({ type: PageInfoDto }) pageInfo: PageInfoDto;
}

export class EmbedTenantsQueryDto extends PageQueryDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 100,
    description: 'Case-insensitive substring of the name',
  })
  search?: string | null;
}
