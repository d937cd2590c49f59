import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { BoolField, IntField, ObjectField, StringField } from '../../../core/http/validation.js';
import { WORKSPACE_ITEM_TYPES } from '../content.sql.js';
import { DashboardConfigDto, DashboardDto } from './dashboard.dto.js';
import { ResourceOwnerDto, WorkspaceFolderPathEntryDto } from './shared.dto.js';

type Json = Record<string, unknown>;

const META_DESCRIPTION =
  'Free-form metadata. A `dashboardDraft` key is validated as a dashboard draft and becomes the ' +
  'workbook’s draft (it is not kept in meta; null clears the draft)';

export class WorkbooksQueryDto extends PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 0,
    description: 'Only the workbooks directly in this folder; 0 for those at the workspace root',
  })
  folderId?: number;
}

export class CreateWorkbookDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Trimmed; omitted or null gives "Untitled workbook"',
  })
  name?: string | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The folder to create it in; omitted or null for the workspace root',
  })
  folderId?: number | null;

  @ObjectField({ optional: true, nullable: true, description: META_DESCRIPTION }) meta?: Json | null;
}

/** The body of the by-slug upsert: the same fields, with update semantics on an existing workbook. */
export class UpsertWorkbookDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Trimmed. On create, omitted or null gives "Untitled workbook"; on update, leaves it alone',
  })
  name?: string | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'Folder to create it in or move it to; null for the root, omitted to leave it alone',
  })
  folderId?: number | null;

  @ObjectField({
    optional: true,
    nullable: true,
    description: `Merged key by key into the stored metadata (a null value removes the key). ${META_DESCRIPTION}`,
  })
  meta?: Json | null;
}

export class UpdateWorkbookDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Trimmed; null leaves it alone',
  })
  name?: string | null;

  @ObjectField({
    optional: true,
    nullable: true,
    description: `Replaces the metadata; null empties it. ${META_DESCRIPTION}`,
  })
  meta?: Json | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'Moves the workbook into this folder; null moves it to the workspace root',
  })
  folderId?: number | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 1000,
    description: 'Deployment-scoped identity, stored trimmed and lowercased; null removes it',
  })
  slug?: string | null;

  @BoolField({
    optional: true,
    nullable: true,
    description: 'Take the slug from the workbook holding it instead of failing with 409',
  })
  slugTakeover?: boolean | null;
}

export class DuplicateWorkbookDto {
  @BoolField({
    optional: true,
    nullable: true,
    description: 'Clone from the shared workspace (creator-mode embed sessions only)',
  })
  shared?: boolean | null;
}

export class WorkbookDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) slug: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) meta: Json;
  @ApiProperty({ type: 'object', additionalProperties: true }) calculatedFields: Json;
  @ApiProperty() deploymentId: number;
  @ApiProperty({ type: Number, nullable: true }) folderId: number | null;
  @ApiProperty({ type: WorkspaceFolderPathEntryDto, isArray: true, description: 'Root first' })
  folderPath: WorkspaceFolderPathEntryDto[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty() createdBy: number;
  @ApiProperty({ type: Number, nullable: true, description: 'The owner' }) userId: number | null;
  @ApiProperty({ type: ResourceOwnerDto, nullable: true }) user: ResourceOwnerDto | null;
  @ApiProperty({ enum: WORKSPACE_ITEM_TYPES, enumName: 'WorkspaceItemType' }) type: 'WORKBOOK';
  @ApiProperty({ type: DashboardConfigDto, nullable: true }) dashboardDraft: DashboardConfigDto | null;
  @ApiProperty({ type: DashboardConfigDto, nullable: true, description: 'The published config' })
  dashboardPublished: DashboardConfigDto | null;
  @ApiProperty({ type: DashboardDto, nullable: true }) publishedDashboard: DashboardDto | null;
  @ApiProperty({ type: Boolean, nullable: true, description: 'Favourites are not kept yet: always null' })
  isFavorite: boolean | null;
}

export class WorkbooksListDto extends PageOf(WorkbookDto, { legacy: 'offset', nullablePageInfo: true }) {}
