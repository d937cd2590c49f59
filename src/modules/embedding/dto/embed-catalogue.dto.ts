import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField } from '../../../core/http/validation.js';
import { WorkbookDto } from '../../workspace/dto/workbook.dto.js';
import { ResourceOwnerDto } from '../../workspace/dto/shared.dto.js';
import { WorkspaceItemDto } from '../../workspace/dto/workspace.dto.js';

type Json = Record<string, unknown>;

/** How an embed tenant reaches a workbook. */
export const EMBED_ACCESS_SOURCES = ['tenant', 'allEmbedUsers', 'folder'] as const;
export type EmbedAccessSource = (typeof EMBED_ACCESS_SOURCES)[number];

export class EmbedTenantWorkbooksQueryDto extends PageQueryDto {
  @EnumField(EMBED_ACCESS_SOURCES, {
    optional: true,
    enumName: 'EmbedTenantWorkbooksListQueryAccessSource',
    description:
      'Only the workbooks reached this way: `tenant` (shared with this tenant), `allEmbedUsers` (shared ' +
      'with every embed user) or `folder` (inside a folder shared with embed users; folders cannot be ' +
      'shared with embed users yet, so this lists nothing). Omitted: every way; a workbook reached ' +
      'several ways is listed once',
  })
  accessSource?: EmbedAccessSource;
}

export class EmbedTenantWorkbooksListDto extends PageOf(WorkbookDto) {}

/** A folder or workbook of the shared workspace, as embed users see it: without its owner. */
export class SharedWorkspaceItemDto extends OmitType(WorkspaceItemDto, [
  'createdBy',
  'userId',
  'user',
  'publicId',
] as const) {
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Owners are not shown to embed users: always null',
  })
  userId: null;
  @ApiProperty({
    type: ResourceOwnerDto,
    nullable: true,
    description: 'Owners are not shown to embed users: always null',
  })
  user: null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Workbooks: their metadata; folders: `{}`',
  })
  meta: Json;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Workbooks: their calculated fields; folders: `{}`',
  })
  calculatedFields: Json;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Workbooks: the public id of the published dashboard, to open with `GET /api/v1/embed/dashboard/{publicId}`; ' +
      'null while nothing is published',
  })
  publicId?: string | null;
}

export class SharedWorkspaceConnectionDto extends PageOf(SharedWorkspaceItemDto) {}
