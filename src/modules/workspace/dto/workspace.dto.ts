import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, ValidateIf } from 'class-validator';
import { BulkActionErrorDto } from '../../../core/http/bulk.js';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField, IntField, NestedField, StringField } from '../../../core/http/validation.js';
import { WORKSPACE_ITEM_TYPES, type WorkspaceItemType } from '../content.sql.js';
import { ResourceOwnerDto, WorkspaceFolderPathEntryDto } from './shared.dto.js';

export const WORKSPACE_ORDER_FIELDS = ['updated_at', 'created_at', 'name', 'viewer_last_viewed_at'] as const;
export type WorkspaceOrderField = (typeof WORKSPACE_ORDER_FIELDS)[number];
export const ORDER_DIRECTIONS = ['ASC', 'DESC'] as const;
export type OrderDirection = (typeof ORDER_DIRECTIONS)[number];

/** A bulk request names at most this many items. */
export const MAX_BULK_ITEMS = 100;

export class WorkspaceQueryDto extends PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 0,
    description:
      'List the contents of this folder; omitted (or 0): the root. With `search`, the whole subtree ' +
      'below this folder is searched',
  })
  folderId?: number;

  @ApiProperty({
    required: false,
    enum: WORKSPACE_ITEM_TYPES,
    enumName: 'WorkspaceItemType',
    isArray: true,
    description: 'Only these item types; repeat the parameter (or separate by commas) for several',
  })
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',') : value))
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @IsIn(WORKSPACE_ITEM_TYPES, {
    each: true,
    message: `each value in types must be one of: ${WORKSPACE_ITEM_TYPES.join(', ')}`,
  })
  types?: WorkspaceItemType[];

  @EnumField(WORKSPACE_ORDER_FIELDS, {
    optional: true,
    enumName: 'GetWorkspaceObjectsQueryOrderByField',
    description:
      'Sorts the workbooks and reports (folders always come first, by position). Default `updated_at`. ' +
      '`viewer_last_viewed_at` is when the caller last viewed a report; items never viewed come last',
  })
  orderByField?: WorkspaceOrderField;

  @EnumField(ORDER_DIRECTIONS, {
    optional: true,
    enumName: 'GetWorkspaceObjectsQueryOrderByDirection',
    description: 'Default `ASC` for `name`, `DESC` for the dates',
  })
  orderByDirection?: OrderDirection;

  @StringField({
    optional: true,
    maxLength: 255,
    description:
      'Case-insensitive substring of the item name, matched in every folder (below `folderId` when given), ' +
      'not only at one level',
  })
  search?: string;
}

/** A folder, workbook or report as the workspace feed and the move endpoints show it. */
export class WorkspaceItemDto {
  @ApiProperty({ enum: WORKSPACE_ITEM_TYPES, enumName: 'WorkspaceItemType' }) type: WorkspaceItemType;
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty() deploymentId: number;
  @ApiProperty({ type: Number, nullable: true, description: 'The containing folder; null at the root' })
  folderId: number | null;
  @ApiProperty({
    type: [WorkspaceFolderPathEntryDto],
    description: 'The path of the containing folder, root first (`[]` at the root)',
  })
  folderPath: WorkspaceFolderPathEntryDto[];
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional() createdBy?: number;
  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Owner id' }) userId?: number | null;
  @ApiProperty({ type: ResourceOwnerDto, nullable: true, description: 'The owner' })
  user: ResourceOwnerDto | null;
  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Folders: the parent folder' })
  parentId?: number | null;
  @ApiPropertyOptional({ description: 'Folders: order among siblings' }) position?: number;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Workbooks' }) slug?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Reports' }) publicId?: string | null;
}

export class WorkspaceConnectionDto extends PageOf(WorkspaceItemDto) {}

export class WorkspaceItemRefDto {
  @EnumField(WORKSPACE_ITEM_TYPES, { enumName: 'WorkspaceItemType' }) type: WorkspaceItemType;
  @IntField({ min: 1 }) id: number;
}

export class MoveWorkspaceObjectDto extends WorkspaceItemRefDto {
  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The destination folder (for a folder: its new parent); null or omitted: the root',
  })
  folderId?: number | null;
}

export class BulkMoveWorkspaceObjectsDto {
  @NestedField(() => WorkspaceItemRefDto, {
    isArray: true,
    maxItems: MAX_BULK_ITEMS,
    description: 'Applied in order; repeated items count once',
  })
  @ArrayMinSize(1)
  items: WorkspaceItemRefDto[];

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The destination folder of every item; null or omitted: the root',
  })
  folderId?: number | null;
}

export class BulkDeleteWorkspaceObjectsDto {
  @NestedField(() => WorkspaceItemRefDto, {
    isArray: true,
    maxItems: MAX_BULK_ITEMS,
    description: 'Applied in order; repeated items count once',
  })
  @ArrayMinSize(1)
  items: WorkspaceItemRefDto[];
}

export class WorkspaceBulkFailureDto {
  @ApiProperty({ enum: WORKSPACE_ITEM_TYPES, enumName: 'WorkspaceItemType' }) type: WorkspaceItemType;
  @ApiProperty() id: number;
  @ApiProperty({ type: BulkActionErrorDto }) error: BulkActionErrorDto;
}

export class BulkMoveWorkspaceObjectsResponseDto {
  @ApiProperty({ type: WorkspaceItemDto, isArray: true, description: 'As POST /workspace/move returns them' })
  moved: WorkspaceItemDto[];
  @ApiProperty({ type: WorkspaceBulkFailureDto, isArray: true }) failed: WorkspaceBulkFailureDto[];
}

export class BulkDeleteWorkspaceObjectsResponseDto {
  @ApiProperty({ type: WorkspaceItemRefDto, isArray: true }) deleted: WorkspaceItemRefDto[];
  @ApiProperty({ type: WorkspaceBulkFailureDto, isArray: true }) failed: WorkspaceBulkFailureDto[];
}
