import { ApiProperty } from '@nestjs/swagger';
import {
  EmailField,
  EnumField,
  IntField,
  NestedField,
  ObjectField,
  StringArrayField,
  StringField,
} from '../../../core/http/validation.js';
import { UserAttributeInputDto } from '../../embedding/dto/embed-session.dto.js';
import {
  DashboardFilterInputDto,
  DashboardMemberSwitcherInputDto,
  DashboardTimeGrainInputDto,
} from '../../notifications/dto/notification.dto.js';

export const EXPORT_FORMATS = ['png', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_SUBJECT_TYPES = ['USER', 'EMBED_USER'] as const;
export type ExportSubjectType = (typeof EXPORT_SUBJECT_TYPES)[number];

export const EXPORT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** Whom an export is rendered as: a console user, or an embed user with this render's own context. */
export class ExportSubjectInputDto {
  @EnumField(EXPORT_SUBJECT_TYPES, {
    enumName: 'ExportSubjectType',
    description: '`USER`: a console user of the account. `EMBED_USER`: an embed user of an embed tenant',
  })
  type: ExportSubjectType;

  @IntField({ optional: true, nullable: true, min: 1, description: 'USER: the user (or email)' })
  userId?: number | null;

  @EmailField({
    optional: true,
    nullable: true,
    description:
      'USER: the user’s email, matched case-insensitively (or userId). EMBED_USER: the address recorded on ' +
      'the embed user it provisions',
  })
  email?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 64, description: 'EMBED_USER: the embed tenant' })
  embedTenantName?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'EMBED_USER: the embed user’s external id (provisioned when new)',
  })
  externalId?: string | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: 100,
    maxLength: 255,
    description:
      'EMBED_USER: groups of the account (they must exist) carried by this render’s security context; the ' +
      'embed user’s stored groups are not changed',
  })
  groups?: string[] | null;

  @NestedField(() => UserAttributeInputDto, { optional: true, nullable: true, isArray: true, maxItems: 100 })
  userAttributes?: UserAttributeInputDto[] | null;

  @ObjectField({
    optional: true,
    nullable: true,
    description:
      'EMBED_USER: the security context the reports are read under, for this render only (as a ' +
      'generate-session call takes it); nothing of the embed user is changed',
  })
  securityContext?: Record<string, unknown> | null;
}

export class StartDashboardExportDto {
  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The dashboard (numeric id); give this or dashboardPublicId, exactly one',
  })
  dashboardId?: number | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 32,
    description: 'The dashboard (public id); give this or dashboardId, exactly one',
  })
  dashboardPublicId?: string | null;

  @EnumField(EXPORT_FORMATS, { enumName: 'DashboardExportFormat', description: '`png` or `pdf`' })
  format: ExportFormat;

  @NestedField(() => DashboardFilterInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  filters?: DashboardFilterInputDto[] | null;

  @NestedField(() => DashboardTimeGrainInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  timeGrains?: DashboardTimeGrainInputDto[] | null;

  @NestedField(() => DashboardMemberSwitcherInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  memberSwitchers?: DashboardMemberSwitcherInputDto[] | null;

  @NestedField(() => ExportSubjectInputDto, { optional: true, nullable: true })
  renderAs?: ExportSubjectInputDto | null;
}

export class DashboardExportJobDto {
  @ApiProperty({
    description: 'The export’s id: poll and download with it',
    example: '3f0c2a4e-8d1b-4c55-9a3e-2b7f1d6c9e01',
  })
  jobId: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When the export and its file are deleted (DASHBOARD_EXPORT_TTL_SECONDS after the start)',
  })
  expiresAt: string;
}

export class DashboardExportStatusDto {
  @ApiProperty({
    enum: EXPORT_STATUSES,
    enumName: 'DashboardExportStatus',
    description:
      '`pending` (queued), `processing` (rendering), `completed` (download it), `failed` (see `error`)',
  })
  status: ExportStatus;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The file’s MIME type (`image/png`, `application/pdf`) once `completed`; else null',
  })
  contentType: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why it failed, when `failed`; else null' })
  error: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    minimum: 0,
    maximum: 100,
    description: 'Percent done: the reports read, then the rendering; null before the export starts',
  })
  progress: number | null;
}

export class DownloadDashboardExportQueryDto {
  @StringField({
    optional: true,
    minLength: 1,
    maxLength: 200,
    description:
      'The file name without extension (default `dashboard`); the extension follows the format. Characters ' +
      'a file name cannot hold become `_`',
  })
  filename?: string;
}
