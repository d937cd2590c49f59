import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import {
  BoolField,
  EnumField,
  IntField,
  NestedField,
  ObjectField,
  StringField,
} from '../../../core/http/validation.js';
import {
  ACCEPTED_WIDGET_TYPES,
  ADVERTISED_WIDGET_TYPES,
  DASHBOARD_KINDS,
  DASHBOARD_STATUSES,
  MAX_WIDGETS,
  REPORT_SNAPSHOT_KINDS,
} from '../dashboards.js';

type Json = Record<string, unknown>;

/** A free-form JSON object that may be absent or null, in a response. */
const OptionalObject = () =>
  ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true });

/**
 * The widget type: documented with the advertised values only, while the validator also takes
 * the retired tabbed-container name that stored dashboards and older clients still use.
 */
function WidgetTypeField(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: [...ADVERTISED_WIDGET_TYPES], enumName: 'DashboardWidgetType' }),
    IsIn([...ACCEPTED_WIDGET_TYPES], {
      message: `$property must be one of: ${ADVERTISED_WIDGET_TYPES.join(', ')}`,
    }),
  );
}

/**
 * A nested field documented with the class itself: given only the lazy type that NestedField
 * passes, the generator emits an empty `$ref` for nullable fields.
 */
function Nested(
  type: new () => object,
  opts: Parameters<typeof NestedField>[1] & { isArray?: boolean } = {},
): PropertyDecorator {
  return applyDecorators(
    NestedField(() => type, opts),
    ApiProperty({ type, isArray: opts.isArray === true }),
  );
}

/** Grid cell of a widget, in grid units. */
export class DashboardWidgetPositionDto {
  @IntField({ min: 0 }) x: number;
  @IntField({ min: 0 }) y: number;
  @IntField({ min: 0 }) w: number;
  @IntField({ min: 0 }) h: number;
}

/** Positions of a widget per responsive breakpoint. */
export class DashboardResponsiveLayoutsDto {
  @Nested(DashboardWidgetPositionDto, { optional: true, nullable: true })
  lg?: DashboardWidgetPositionDto | null;

  @Nested(DashboardWidgetPositionDto, { optional: true, nullable: true })
  md?: DashboardWidgetPositionDto | null;

  @Nested(DashboardWidgetPositionDto, { optional: true, nullable: true })
  sm?: DashboardWidgetPositionDto | null;

  @Nested(DashboardWidgetPositionDto, { optional: true, nullable: true })
  xs?: DashboardWidgetPositionDto | null;

  @Nested(DashboardWidgetPositionDto, { optional: true, nullable: true })
  xxs?: DashboardWidgetPositionDto | null;
}

/** What every widget carries, whatever its id rules. */
class DashboardWidgetFields {
  @WidgetTypeField() type: string;

  @Nested(DashboardWidgetPositionDto) position: DashboardWidgetPositionDto;

  @ObjectField({
    optional: true,
    nullable: true,
    description: 'Widget settings; a numeric `reportId` (at any depth) references a report of the workbook',
  })
  config?: Json | null;

  @ObjectField({ optional: true, nullable: true }) style?: Json | null;

  @Nested(DashboardResponsiveLayoutsDto, { optional: true, nullable: true })
  responsiveLayouts?: DashboardResponsiveLayoutsDto | null;
}

/** A widget of a draft: the id may be left for later. */
export class DashboardWidgetDraftInputDto extends DashboardWidgetFields {
  @StringField({ optional: true, nullable: true, maxLength: 128 }) id?: string | null;
}

/** A widget of a dashboard being published: every widget needs its id. */
export class DashboardWidgetInputDto extends DashboardWidgetFields {
  @StringField({ minLength: 1, maxLength: 128 }) id: string;
}

/** The parts of a dashboard config other than its widgets. */
class DashboardConfigFields {
  @EnumField(DASHBOARD_KINDS, { optional: true, nullable: true, enumName: 'DashboardConfigKind' })
  kind?: (typeof DASHBOARD_KINDS)[number] | null;

  @StringField({ optional: true, nullable: true, maxLength: 1000 }) title?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 10_000 }) description?: string | null;

  @ObjectField({ optional: true, nullable: true, description: 'Grid settings (breakpoints, cols, margins)' })
  layout?: Json | null;

  @ObjectField({ optional: true, nullable: true }) settings?: Json | null;

  @ObjectField({ optional: true, nullable: true }) theme?: Json | null;

  @ObjectField({ optional: true, nullable: true, description: 'Source of an APP dashboard' })
  app?: Json | null;
}

export class DashboardConfigDraftInputDto extends DashboardConfigFields {
  @Nested(DashboardWidgetDraftInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: MAX_WIDGETS,
  })
  widgets?: DashboardWidgetDraftInputDto[] | null;
}

export class DashboardConfigInputDto extends DashboardConfigFields {
  @Nested(DashboardWidgetInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: MAX_WIDGETS,
  })
  widgets?: DashboardWidgetInputDto[] | null;
}

export class WorkbookDashboardInputDto {
  @Nested(DashboardConfigDraftInputDto, {
    optional: true,
    nullable: true,
    description: 'The new draft; null clears it, omitted leaves it alone',
  })
  dashboardDraft?: DashboardConfigDraftInputDto | null;
}

export class PublishDashboardDto {
  @IntField({ min: 1, description: 'Must be the workbook of the path' }) workbookId: number;

  @Nested(DashboardConfigInputDto, {
    optional: true,
    nullable: true,
    description: 'The config to publish; omitted or null publishes the current draft',
  })
  config?: DashboardConfigInputDto | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Omitted keeps the current title',
  })
  title?: string | null;

  @BoolField({
    optional: true,
    nullable: true,
    description: 'Signed embedding; omitted or null keeps the current setting (off at first publish)',
  })
  allowEmbed?: boolean | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'When sent, must be the id of the workbook’s published dashboard',
  })
  dashboardId?: number | null;
}

/** A widget as stored; drafts may hold widgets without an id yet. */
export class DashboardWidgetDto {
  @ApiProperty({ required: false, type: String }) id?: string;
  @ApiProperty({ enum: [...ADVERTISED_WIDGET_TYPES], enumName: 'DashboardWidgetType' })
  type: string;
  @ApiProperty({ type: DashboardWidgetPositionDto }) position: DashboardWidgetPositionDto;
  @OptionalObject()
  config?: Json | null;
  @OptionalObject()
  style?: Json | null;
  @ApiProperty({ required: false, type: DashboardResponsiveLayoutsDto, nullable: true })
  responsiveLayouts?: DashboardResponsiveLayoutsDto | null;
}

export class DashboardConfigDto {
  @ApiProperty({ required: false, enum: DASHBOARD_KINDS, enumName: 'DashboardConfigKind', nullable: true })
  kind?: string | null;
  @ApiProperty({ required: false, type: String, nullable: true }) title?: string | null;
  @ApiProperty({ required: false, type: String, nullable: true }) description?: string | null;
  @ApiProperty({ required: false, type: DashboardWidgetDto, isArray: true, nullable: true })
  widgets?: DashboardWidgetDto[] | null;
  @OptionalObject()
  layout?: Json | null;
  @OptionalObject()
  settings?: Json | null;
  @OptionalObject()
  theme?: Json | null;
  @OptionalObject()
  app?: Json | null;
}

export class WorkbookDashboardDto {
  @ApiProperty({ type: DashboardConfigDto, nullable: true }) dashboardDraft: DashboardConfigDto | null;
  @ApiProperty({ type: DashboardConfigDto, nullable: true, description: 'The published config' })
  dashboardPublished: DashboardConfigDto | null;
}

/** A report as the published dashboard shows it: a copy taken when the dashboard was published. */
export class ReportSnapshotDto {
  @ApiProperty({ description: 'The snapshot; `reportVersionId` of a python run' }) id: number;
  @ApiProperty() reportId: number;
  @ApiProperty({ description: 'The report’s `version` when the snapshot was taken' }) versionNumber: number;
  @ApiProperty({ required: false, type: String, nullable: true }) name?: string | null;
  @ApiProperty({ required: false, type: String, nullable: true }) title?: string | null;
  @ApiProperty({ required: false, type: String, nullable: true }) description?: string | null;
  @ApiProperty({
    required: false,
    enum: REPORT_SNAPSHOT_KINDS,
    enumName: 'ReportSnapshotKind',
    nullable: true,
  })
  kind?: string | null;
  @ApiProperty({ required: false, type: String, nullable: true }) sqlQuery?: string | null;
  @ApiProperty({
    required: false,
    type: String,
    nullable: true,
    description: 'The Python a python run of this snapshot executes',
  })
  pythonCode?: string | null;
  @OptionalObject()
  meta?: Json | null;
}

/** The published dashboard of a workbook. */
export class DashboardDto {
  @ApiProperty() id: number;
  @ApiProperty({ description: 'Identifies the dashboard in embedding' }) publicId: string;
  @ApiProperty() deploymentId: number;
  @ApiProperty() workbookId: number;
  @ApiProperty({ enum: DASHBOARD_STATUSES, enumName: 'DashboardStatus' }) status: string;
  @ApiProperty({ description: 'Signed embedding enabled' }) allowEmbed: boolean;
  @ApiProperty({ type: DashboardConfigDto }) config: DashboardConfigDto;
  @ApiProperty({ description: 'Starts at 1; each publish adds one' }) versionNumber: number;
  @ApiProperty() versionId: number;
  @ApiProperty({
    type: ReportSnapshotDto,
    isArray: true,
    description:
      'The reports of the workbook as the last publish took them (each publish takes them anew, with new ids)',
  })
  reportSnapshots: ReportSnapshotDto[];
  @ApiProperty({ type: String, nullable: true }) title: string | null;
  @ApiProperty({ type: Number, nullable: true }) createdBy: number | null;
}
