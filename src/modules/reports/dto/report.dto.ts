import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, MaxLength } from 'class-validator';
import { ALL_ACTIONS } from '../../../core/auth/action.js';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField, IntField, NestedField, ObjectField, StringField } from '../../../core/http/validation.js';
import { ResourceOwnerDto, WorkspaceFolderPathEntryDto } from '../../workspace/dto/shared.dto.js';

export const SPREADSHEET_HOSTS = ['GOOGLE_SHEETS', 'EXCEL'] as const;
export const REPORT_SOURCES = ['GOOGLE_SHEETS', 'EXCEL', 'PLAYGROUND', 'D3'] as const;
export const REPORT_SORTS = ['createdAt', 'updatedAt', 'lastViewedAt', 'name'] as const;
export type ReportSort = (typeof REPORT_SORTS)[number];

export const PUBLIC_ID_PATTERN = /^[0-9A-Za-z]{12}$/;

/** The longest `pythonCode` a report may hold, in characters. */
export const PYTHON_CODE_MAX_LENGTH = 100_000;

export class PivotItemsInputDto {
  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  columns: string[];

  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  measures: string[];

  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  rows: string[];

  @ApiProperty({ type: [String] })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  filters: string[];

  @EnumField(['columns', 'rows'], { optional: true, nullable: true, enumName: 'PivotItemsMeasuresAxis' })
  measuresAxis?: 'columns' | 'rows' | null;

  @EnumField(['before', 'after'], { optional: true, nullable: true, enumName: 'PivotItemsMeasuresPosition' })
  measuresPosition?: 'before' | 'after' | null;
}

/** The definition fields shared by create, upsert and update. */
class ReportDefinitionInputDto {
  @StringField({ optional: true, nullable: true, maxLength: 255 }) name?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) title?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 10_000 }) description?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1_000_000 }) jsonQuery?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1_000_000 }) sqlQuery?: string | null;
  @StringField({
    optional: true,
    nullable: true,
    maxLength: PYTHON_CODE_MAX_LENGTH,
    description:
      'Python run over the rows of `sqlQuery` (`rows`: a list of dicts); what it prints and its `output` ' +
      'variable are the result. Runs from a published dashboard (`POST /embed/dashboard/{publicId}/python-run`).',
  })
  pythonCode?: string | null;
  @ObjectField({ optional: true, nullable: true }) meta?: Record<string, unknown> | null;
  @NestedField(() => PivotItemsInputDto, { optional: true, nullable: true })
  pivotItems?: PivotItemsInputDto | null;
  @IntField({ optional: true, nullable: true, min: 1 }) folderId?: number | null;
  @IntField({ optional: true, nullable: true, min: 1 }) workbookId?: number | null;
  @StringField({
    optional: true,
    nullable: true,
    pattern: PUBLIC_ID_PATTERN,
    patternMessage: 'publicId must be exactly 12 letters or digits',
    description: 'A stable id of your choosing: exactly 12 characters [0-9A-Za-z]. Write-once.',
  })
  publicId?: string | null;
}

export class CreateReportDto extends ReportDefinitionInputDto {
  @EnumField(REPORT_SOURCES, { optional: true, nullable: true, enumName: 'ReportSource' })
  source?: (typeof REPORT_SOURCES)[number] | null;
}

export class UpdateReportDto extends ReportDefinitionInputDto {
  @IntField({
    optional: true,
    min: 1,
    description: 'When sent, the update applies only if the report is still at this version (409 otherwise)',
  })
  expectedVersion?: number;
}

export class ReportsQueryDto extends PageQueryDto {
  @StringField({ optional: true, maxLength: 255, description: 'Case-insensitive substring of the name' })
  search?: string;

  @IntField({ optional: true, query: true, min: 1 }) folderId?: number;
  @IntField({ optional: true, query: true, min: 1 }) workbookId?: number;
  @StringField({ optional: true, maxLength: 1024 }) externalWorkbookId?: string;

  @EnumField(REPORT_SORTS, { optional: true, enumName: 'GetReportsQuerySortBy' }) sortBy?: ReportSort;

  @EnumField(['ASC', 'DESC'], { optional: true, enumName: 'GetReportsQuerySortDirection' })
  sortDirection?: 'ASC' | 'DESC';

  @IntField({
    optional: true,
    query: true,
    min: 1,
    max: 1000,
    deprecated: true,
    description: 'Legacy page size',
  })
  limit?: number;

  @IntField({
    optional: true,
    query: true,
    min: 1,
    deprecated: true,
    description: 'Legacy page number, from 1',
  })
  page?: number;
}

/**
 * Addresses one placement: by `placementId`, or by `externalWorkbookId` with `sheetName` and
 * `anchorCell` (or a `resultLocation` naming both). `sheetId` only narrows.
 */
export class PlacementTargetDto {
  @StringField({ optional: true, nullable: true, maxLength: 64 }) placementId?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1024 }) externalWorkbookId?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) sheetName?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 64 }) anchorCell?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1024 }) resultLocation?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) sheetId?: string | null;
}

export class DisconnectReportDto extends PlacementTargetDto {}

export class RefreshReportDto extends PlacementTargetDto {}

export class ConnectReportDto {
  @StringField({ minLength: 1, maxLength: 1024, description: 'The spreadsheet id' })
  externalWorkbookId: string;

  @StringField({
    minLength: 1,
    maxLength: 1024,
    description: "Where the result lands: `Sheet!A1`, `'Sheet name'!A1` or `Sheet!A1:D20`",
  })
  resultLocation: string;

  @StringField({ optional: true, nullable: true, maxLength: 64 }) endResultCell?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 64, description: 'Update this placement' })
  placementId?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) sheetId?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) sheetName?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 64 }) anchorCell?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1024 }) workbookName?: string | null;
  @EnumField(SPREADSHEET_HOSTS, { optional: true, nullable: true, enumName: 'ReportPlacementHost' })
  host?: (typeof SPREADSHEET_HOSTS)[number] | null;
}

export class PivotItemsDto {
  @ApiProperty({ type: [String] }) columns: string[];
  @ApiProperty({ type: [String] }) measures: string[];
  @ApiProperty({ type: [String] }) rows: string[];
  @ApiProperty({ type: [String] }) filters: string[];
  @ApiPropertyOptional({ enum: ['columns', 'rows'], nullable: true }) measuresAxis?: string | null;
  @ApiPropertyOptional({ enum: ['before', 'after'], nullable: true }) measuresPosition?: string | null;
}

export class ReportPlacementDto {
  @ApiProperty({ description: 'The spreadsheet id' }) workbookId: string;
  @ApiProperty() resultLocation: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Null on placements recorded before ids existed',
  })
  id: string | null;
  @ApiProperty({ type: String, nullable: true }) anchorCell: string | null;
  @ApiProperty({ type: String, nullable: true }) endResultCell: string | null;
  @ApiProperty({ enum: SPREADSHEET_HOSTS, enumName: 'ReportPlacementHost', nullable: true }) host:
    string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Null on placements recorded before sheet ids' })
  sheetId: string | null;
  @ApiProperty({ type: String, nullable: true }) sheetName: string | null;
  @ApiProperty({ type: String, nullable: true }) workbookName: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) placedAt: string | null;
  @ApiProperty({ type: Number, nullable: true }) placedByUserId: number | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) refreshedAt: string | null;
  @ApiProperty({ type: Number, nullable: true }) refreshedByUserId: number | null;
}

export class RoleWithAccessDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ALL_ACTIONS, enumName: 'RoleAction', isArray: true }) actions: string[];
}

export class ReportDto {
  @ApiProperty() id: number;
  @ApiProperty({ minLength: 12, maxLength: 12, pattern: '^[0-9A-Za-z]+$' }) publicId: string;
  @ApiProperty() deploymentId: number;
  @ApiProperty({ description: 'Owner id' }) userId: number;
  @ApiProperty({ type: ResourceOwnerDto }) user: ResourceOwnerDto;
  @ApiProperty({ type: ResourceOwnerDto, description: 'Who refreshed it last (the owner until then)' })
  refreshedByUser: ResourceOwnerDto;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['FOLDER', 'WORKBOOK', 'REPORT'], enumName: 'WorkspaceItemType' }) type: 'REPORT';
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) canEdit: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) canManage: boolean | null;
  @ApiPropertyOptional() createdBy: number;
  @ApiPropertyOptional({ type: String, nullable: true }) description: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) title: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Of the most recently placed placement' })
  endResultCell: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Of the most recently placed placement' })
  resultLocation: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Of the most recently placed placement' })
  externalWorkbookId: string | null;
  @ApiPropertyOptional({ type: [ReportPlacementDto], nullable: true }) externalWorkbookPlacements:
    ReportPlacementDto[] | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) folderId: number | null;
  @ApiPropertyOptional({ type: [WorkspaceFolderPathEntryDto] }) folderPath: WorkspaceFolderPathEntryDto[];
  @ApiPropertyOptional({ type: String, nullable: true }) jsonQuery: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) sqlQuery: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Python run over the rows of sqlQuery' })
  pythonCode: string | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  meta: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: PivotItemsDto, nullable: true }) pivotItems: PivotItemsDto | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) refreshedBy: number | null;
  @ApiPropertyOptional({
    type: [RoleWithAccessDto],
    nullable: true,
    description: 'Custom roles with access to the report; shown to callers who can manage it, else null',
  })
  rolesWithAccess: RoleWithAccessDto[] | null;
  @ApiPropertyOptional({ enum: REPORT_SOURCES, enumName: 'ReportSource', nullable: true }) source:
    string | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) version: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) workbookId: number | null;
}

export class ReportsListDto extends PageOf(ReportDto, { legacy: 'offset', count: { minimum: 0 } }) {}
