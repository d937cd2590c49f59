import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { isNotFound, notFound } from '../../core/errors/not-found.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { normalizeExternalId, normalizeTenantName } from '../embedding/embed-identity.js';
import { EmbedAccessService } from '../embedding/embed-access.service.js';
import { EmbedTenantsService } from '../embedding/embed-tenants.service.js';
import { desiredState, EmbedUsersService } from '../embedding/embed-users.service.js';
import {
  DashboardRendering,
  embedSecurityContext,
  type PublishedDashboard,
} from '../notifications/dashboard-rendering.service.js';
import { SettingsService } from '../settings/settings.service.js';
import { UserAttributesService } from '../user-attributes/user-attributes.service.js';
import { DirectoryService } from '../users/directory.service.js';
import { GroupsService } from '../users/groups.service.js';
import { WorkbookLookup } from '../workspace/workbooks.shared.js';
import { DashboardExportClock } from './dashboard-export-clock.js';
import {
  DASHBOARD_EXPORT_JOB,
  DASHBOARD_EXPORT_PRUNE_JOB,
  exportOwner,
  PRUNE_CRON,
  PRUNE_SCHEDULE_OWNER,
} from './dashboard-export.job.js';
import { dashboardExportsError } from './dashboard-exports.errors.js';
import { DashboardExportsRepository, type ExportStateRow } from './dashboard-exports.repository.js';
import type {
  DashboardExportJobDto,
  DashboardExportStatusDto,
  ExportStatus,
  ExportSubjectInputDto,
  StartDashboardExportDto,
} from './dto/dashboard-export.dto.js';

/** A job id is a UUID; anything else names no export. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** What a 429 suggests waiting before trying again: about one render. */
const RETRY_AFTER_SECONDS = 10;

/** Whom an export renders as, resolved. An embed user is provisioned in the start's unit of work. */
type Subject =
  | { type: 'USER'; userId: number; context: Record<string, unknown> }
  | {
      type: 'EMBED_USER';
      tenant: string;
      externalId: string;
      email: string | null;
      context: Record<string, unknown>;
    };

/** A downloadable file. */
export interface ExportFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/**
 * Dashboard exports: an asynchronous render of a published dashboard to PNG or PDF by the
 * notifications' renderer (`DashboardRendering`), as the caller or as a chosen console or embed
 * user. Each export is a `dashboard-export.render` job with a run record; its row keeps the file
 * in PostgreSQL until it expires. Only the user who started an export sees it.
 */
@Injectable()
export class DashboardExportsService {
  /** Whether this process made sure the prune is scheduled. */
  private pruneScheduled = false;

  constructor(
    private readonly db: Database,
    private readonly exports: DashboardExportsRepository,
    private readonly rendering: DashboardRendering,
    private readonly workbooks: WorkbookLookup,
    private readonly settings: SettingsService,
    private readonly directory: DirectoryService,
    private readonly groups: GroupsService,
    private readonly attributes: UserAttributesService,
    private readonly embedAccess: EmbedAccessService,
    private readonly tenants: EmbedTenantsService,
    private readonly embedUsers: EmbedUsersService,
    private readonly jobs: JobQueue,
    private readonly schedules: JobSchedules,
    private readonly clock: DashboardExportClock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Starts an export: 400 for bad input, 404 for a dashboard not published in this deployment (or
   * whose workbook the caller cannot read), 403 without manage access to the workbook, for a
   * `renderAs` of a caller who is not an admin, for an embed subject whose tenant the workbook is
   * not shared with, or when the account restricts data downloads; 429 past the account's bound.
   */
  async start(
    actor: Principal,
    deploymentId: number,
    dto: StartDashboardExportDto,
  ): Promise<DashboardExportJobDto> {
    const by = dashboardRef(dto);
    assertFilters(dto.filters);
    const subjectAsked = dto.renderAs ? checkSubject(dto.renderAs) : null;
    if (subjectAsked && !actor.isAdmin) {
      throw coreError(
        'forbidden',
        'renderAs needs a tenant admin: only they may export on someone else’s behalf',
      );
    }
    await this.workbooks.assertDeployment(actor, deploymentId);
    const dashboard = await this.rendering.published(actor.accountId, deploymentId, by);
    const missing = () => notFound('Dashboard', 'id' in by ? by.id : by.publicId);
    if (!dashboard) throw missing();
    try {
      await this.workbooks.locate(actor, deploymentId, dashboard.workbookId, Action.WorkbookManage);
    } catch (err) {
      // A dashboard whose workbook the caller cannot read is a dashboard they cannot see.
      throw isNotFound(err, 'Workbook') ? missing() : err;
    }
    await this.assertDownloadsAllowed(actor.accountId);
    const subject = subjectAsked
      ? await this.resolveSubject(actor.accountId, dashboard, subjectAsked)
      : ({ type: 'USER', userId: actor.userId, context: {} } as const);

    this.jobs.assertAvailable();
    await this.schedulePrune();
    const id = randomUUID();
    const createdAt = this.clock.now();
    const expiresAt = new Date(createdAt.getTime() + this.config.dashboardExports.ttlSeconds * 1000);
    await this.db.transaction(async () => {
      await this.exports.lockAccount(actor.accountId);
      const max = this.config.dashboardExports.maxInFlight;
      if ((await this.exports.inFlight(actor.accountId, createdAt)) >= max) {
        throw dashboardExportsError(
          'dashboard_export_limit_reached',
          `The account has ${max} dashboard exports pending or processing already; retry when one has ended`,
          { retryAfterSeconds: RETRY_AFTER_SECONDS },
        );
      }
      const subjectId =
        subject.type === 'USER' ? subject.userId : await this.provision(actor.accountId, subject);
      const run = await this.jobs.enqueue(
        DASHBOARD_EXPORT_JOB,
        { exportId: id },
        { accountId: actor.accountId, owner: exportOwner(id) },
      );
      await this.exports.insert({
        id,
        accountId: actor.accountId,
        deploymentId,
        dashboardId: dashboard.id,
        userId: actor.userId,
        runId: run.runId!,
        format: dto.format,
        overrides: {
          filters: dto.filters ?? null,
          timeGrains: dto.timeGrains ?? null,
          memberSwitchers: dto.memberSwitchers ?? null,
        },
        subjectType: subject.type,
        subjectId,
        securityContext: subject.context,
        createdAt,
        expiresAt,
      });
    });
    return { jobId: id, expiresAt: expiresAt.toISOString() };
  }

  /** The export's status; 404 when it is not the caller's, not of this deployment, or expired. */
  async status(actor: Principal, deploymentId: number, jobId: string): Promise<DashboardExportStatusDto> {
    const row = await this.find(actor, deploymentId, jobId);
    const status = statusOf(row);
    return {
      status,
      contentType: status === 'completed' ? row.contentType : null,
      error: status === 'failed' ? (row.runError ?? failureOf(row)) : null,
      // A run queued again for a retry keeps its last progress: pending shows none.
      progress: status === 'completed' ? 100 : status === 'processing' ? progressOf(row) : null,
    };
  }

  /**
   * The rendered file, named `<filename>.<format>` (`dashboard` by default). 409 while it renders,
   * 422 when it failed, 404 as {@link status}, 403 when the account restricts data downloads.
   */
  async download(
    actor: Principal,
    deploymentId: number,
    jobId: string,
    filename: string | undefined,
  ): Promise<ExportFile> {
    const row = await this.find(actor, deploymentId, jobId);
    const status = statusOf(row);
    if (status === 'pending' || status === 'processing') {
      throw dashboardExportsError(
        'dashboard_export_not_ready',
        `Dashboard export ${jobId} is ${status}: poll its status until it is completed`,
      );
    }
    if (status === 'failed') {
      throw dashboardExportsError(
        'dashboard_export_failed',
        `Dashboard export ${jobId} failed: ${row.runError ?? failureOf(row)}; start a new export`,
      );
    }
    await this.assertDownloadsAllowed(actor.accountId);
    const content = await this.exports.content(row.id);
    if (!content) throw notFound('DashboardExport', jobId);
    return {
      filename: `${fileStem(filename)}.${row.format}`,
      contentType: row.contentType ?? (row.format === 'pdf' ? 'application/pdf' : 'image/png'),
      content,
    };
  }

  private async find(actor: Principal, deploymentId: number, jobId: string): Promise<ExportStateRow> {
    const row = JOB_ID.test(jobId)
      ? await this.exports.state(
          { accountId: actor.accountId, deploymentId, userId: actor.userId },
          jobId.toLowerCase(),
          this.clock.now(),
        )
      : undefined;
    if (!row) throw notFound('DashboardExport', jobId);
    return row;
  }

  private async assertDownloadsAllowed(accountId: number): Promise<void> {
    if (await this.settings.dataDownloadsRestricted(accountId)) {
      throw dashboardExportsError(
        'data_downloads_restricted',
        'Data downloads are restricted for this account (app config restrictDataDownload): dashboards are not exported',
      );
    }
  }

  /**
   * The subject asked for, checked: a console user of the account who is active (404 otherwise),
   * or an embed user of a tenant the dashboard's workbook is shared with (403 otherwise), whose
   * groups and attribute names exist (400 otherwise).
   */
  private async resolveSubject(
    accountId: number,
    dashboard: PublishedDashboard,
    asked: ExportSubjectInputDto,
  ): Promise<Subject> {
    if (asked.type === 'USER') {
      const user =
        asked.userId != null
          ? await this.directory.getUser(accountId, asked.userId)
          : (
              await this.directory.findUsers(
                accountId,
                {
                  sql: 'lower(u.email) = :subjectEmail',
                  params: { subjectEmail: asked.email!.trim().toLowerCase() },
                },
                0,
                1,
              )
            ).rows[0];
      if (!user || user.isDeactivated) throw notFound('User', asked.userId ?? asked.email!);
      return { type: 'USER', userId: user.id, context: {} };
    }
    const tenant = normalizeTenantName(asked.embedTenantName!);
    const externalId = normalizeExternalId(asked.externalId!);
    if (!(await this.embedAccess.sharedWithTenant(accountId, dashboard.workbookId, tenant))) {
      throw dashboardExportsError(
        'export_subject_not_shared',
        `The dashboard’s workbook is not shared with embed tenant "${tenant}": its users cannot see it`,
      );
    }
    if (asked.groups?.length) await this.groups.resolve(accountId, asked.groups);
    const unknown = await this.attributes.unknownNames(
      accountId,
      (asked.userAttributes ?? []).map((a) => a.name),
    );
    if (unknown.length > 0) {
      throw coreError(
        'validation_failed',
        unknown.map(
          (name) => `renderAs.userAttributes names ${name}, which is not a user attribute of the account`,
        ),
      );
    }
    return {
      type: 'EMBED_USER',
      tenant,
      externalId,
      email: asked.email ?? null,
      context: embedSecurityContext({
        securityContext: asked.securityContext,
        userAttributes: asked.userAttributes,
        groups: asked.groups,
      }),
    };
  }

  /**
   * Provisions the embed user (created when new, its email recorded) inside the start's unit of
   * work. Its stored groups and context are left alone: this render's own travel on the export.
   */
  private async provision(
    accountId: number,
    subject: Extract<Subject, { type: 'EMBED_USER' }>,
  ): Promise<number> {
    const tenant = await this.tenants.ensure(accountId, subject.tenant);
    return this.embedUsers.apply(
      accountId,
      tenant,
      desiredState({ externalId: subject.externalId, email: subject.email }),
    );
  }

  /** Makes sure the prune of expired exports is scheduled (once, whichever process asks first). */
  private async schedulePrune(): Promise<void> {
    if (this.pruneScheduled) return;
    await this.schedules.ensure({
      owner: PRUNE_SCHEDULE_OWNER,
      job: DASHBOARD_EXPORT_PRUNE_JOB,
      cron: PRUNE_CRON,
      payload: {},
    });
    this.pruneScheduled = true;
  }
}

function dashboardRef(dto: StartDashboardExportDto): { id: number } | { publicId: string } {
  const byId = dto.dashboardId != null;
  const byPublicId = dto.dashboardPublicId != null;
  if (byId === byPublicId) {
    throw coreError('validation_failed', ['Give exactly one of dashboardId and dashboardPublicId']);
  }
  return byId ? { id: dto.dashboardId! } : { publicId: dto.dashboardPublicId! };
}

/** A `between` filter needs its two bounds. */
function assertFilters(filters: StartDashboardExportDto['filters']): void {
  const errors = (filters ?? []).flatMap((f, i) =>
    f.operator === 'between' && !(Array.isArray(f.value) && f.value.length === 2)
      ? [`filters[${i}].value must be [start, end] for the between operator`]
      : [],
  );
  if (errors.length > 0) throw coreError('validation_failed', errors);
}

/** The fields of `renderAs` fit its type; 400 naming each that does not. */
function checkSubject(subject: ExportSubjectInputDto): ExportSubjectInputDto {
  const errors: string[] = [];
  if (subject.type === 'USER') {
    if ((subject.userId != null) === (subject.email != null))
      errors.push('renderAs: a USER subject needs userId or email, not both');
    for (const field of [
      'embedTenantName',
      'externalId',
      'groups',
      'userAttributes',
      'securityContext',
    ] as const)
      if (subject[field] != null) errors.push(`renderAs.${field} is for an EMBED_USER subject only`);
  } else {
    if (subject.embedTenantName == null || subject.externalId == null)
      errors.push('renderAs: an EMBED_USER subject needs embedTenantName and externalId');
    if (subject.userId != null) errors.push('renderAs.userId is for a USER subject only');
  }
  if (errors.length > 0) throw coreError('validation_failed', errors);
  return subject;
}

function statusOf(row: ExportStateRow): ExportStatus {
  switch (row.runStatus) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'processing';
    case 'succeeded':
      return row.hasFile ? 'completed' : 'failed';
    default:
      return 'failed';
  }
}

/** Why an export failed when its run says nothing. */
function failureOf(row: ExportStateRow): string {
  if (row.runStatus === 'cancelled') return 'The export was cancelled';
  return 'The export ended without a file';
}

/** Percent done from the run's progress (reports read, then the rendering), or null before it starts. */
function progressOf(row: ExportStateRow): number | null {
  if (row.progressCurrent === null || !row.progressTotal) return null;
  return Math.max(
    0,
    Math.min(100, Math.round((Number(row.progressCurrent) / Number(row.progressTotal)) * 100)),
  );
}

/** The stem asked for, without what a file name cannot hold; `dashboard` when nothing is left. */
export function fileStem(asked: string | undefined): string {
  const stem = (asked ?? '')
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '_')
    .trim()
    .replace(/^\.+/, '');
  return stem || 'dashboard';
}
