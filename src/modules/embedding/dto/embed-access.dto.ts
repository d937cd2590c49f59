import { ApiProperty } from '@nestjs/swagger';
import { BoolField, EnumField, StringField } from '../../../core/http/validation.js';

export const EMBED_ACCESS_ACTIONS = ['read', 'none'] as const;
export type EmbedAccessAction = (typeof EMBED_ACCESS_ACTIONS)[number];

export class EmbedAccessAllEmbedUsersDto {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ enum: EMBED_ACCESS_ACTIONS, enumName: 'EmbedAccessAction' }) action: EmbedAccessAction;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The share, while enabled' }) groupId:
    number | null;
}

export class EmbedAccessTenantEntryDto {
  @ApiProperty() embedTenantName: string;
  @ApiProperty({ description: 'The share' }) groupId: number;
  @ApiProperty({ enum: EMBED_ACCESS_ACTIONS, enumName: 'EmbedAccessAction' }) action: EmbedAccessAction;
}

export class EmbedAccessResponseDto {
  @ApiProperty({ description: 'Signed embedding allowed for the published dashboard' }) allowEmbed: boolean;
  @ApiProperty({ type: EmbedAccessAllEmbedUsersDto }) allEmbedUsers: EmbedAccessAllEmbedUsersDto;
  @ApiProperty({ type: EmbedAccessTenantEntryDto, isArray: true }) tenants: EmbedAccessTenantEntryDto[];
}

/**
 * One audience change (`embedTenantName` or `allEmbedUsers: true`, with `action`), and/or
 * `allowEmbed`.
 */
export class UpdateEmbedAccessDto {
  @EnumField(EMBED_ACCESS_ACTIONS, { optional: true, nullable: true, enumName: 'EmbedAccessAction' })
  action?: EmbedAccessAction | null;

  @BoolField({ optional: true, nullable: true, description: '`true` targets every embed user' })
  allEmbedUsers?: boolean | null;

  @BoolField({ optional: true, nullable: true, description: 'Allow signed embedding of the dashboard' })
  allowEmbed?: boolean | null;

  @StringField({ optional: true, nullable: true, maxLength: 36, description: 'One embed tenant' })
  embedTenantName?: string | null;
}

export class UpdateDashboardEmbeddingDto {
  @BoolField({ description: 'Allow signed embedding: embed tokens may open the dashboard' })
  allowEmbed: boolean;
}

export class DashboardEmbeddingResponseDto {
  @ApiProperty() publicId: string;
  @ApiProperty() allowEmbed: boolean;
}
