import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { isoSql } from '../database/sql.js';
import { keysetPredicate, type CursorValue } from '../http/pagination.js';
import { AuditLogSetting } from './audit-log-setting.js';

/** One audit event as stored, before the database numbers and dates it. */
export interface NewAuditEvent {
  accountId: number;
  actorType: 'user' | 'embed_user';
  actorId: number;
  actorEmail: string | null;
  action: string;
  method: string;
  path: string;
  targetType: string | null;
  targetId: string | null;
  requestId: string;
  outcome: 'success' | 'failure';
  statusCode: number;
  /** What the entry records beyond its request (see `audit-details.ts`); null for most. */
  details: Record<string, unknown> | null;
}

/** An audit event as listed. */
export interface AuditEventRow {
  id: string;
  occurredAt: string;
  actorType: string;
  actorId: number;
  actorEmail: string | null;
  action: string;
  method: string;
  path: string;
  targetType: string | null;
  targetId: string | null;
  requestId: string;
  outcome: string;
  statusCode: number;
  details: Record<string, unknown> | null;
}

/** The filters of the audit log list, each optional. */
export interface AuditEventFilter {
  actorId?: number;
  actorType?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  outcome?: string;
  from?: string;
  to?: string;
}

/** `column = :name` for every filter given. */
const FILTERS: Record<keyof AuditEventFilter, string> = {
  actorId: 'e.actor_id = :actorId',
  actorType: 'e.actor_type = :actorType',
  action: 'e.action = :action',
  targetType: 'e.target_type = :targetType',
  targetId: 'e.target_id = :targetId',
  outcome: 'e.outcome = :outcome',
  from: 'e.occurred_at >= :from',
  to: 'e.occurred_at < :to',
};

/** SQL over `audit_events`. Whether an account records events is its tenant setting, read through {@link AuditLogSetting}. */
@Injectable()
export class AuditRepository {
  constructor(
    private readonly db: Database,
    private readonly setting: AuditLogSetting,
  ) {}

  async isEnabled(accountId: number): Promise<boolean> {
    const row = await this.db.one<{ enabled: boolean }>(
      `SELECT ${this.setting.enabledSql(':accountId')} AS enabled`,
      { accountId },
    );
    return row?.enabled === true;
  }

  /** Records the event when the account has the audit log on: one statement that checks the setting. */
  async insertIfEnabled(e: NewAuditEvent): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_events (account_id, actor_type, actor_id, actor_email, action, method, path,
         target_type, target_id, request_id, outcome, status_code, details)
       SELECT :accountId, :actorType, :actorId, :actorEmail, :action, :method, :path,
         :targetType, :targetId, :requestId, :outcome, :statusCode, :details::jsonb
       WHERE ${this.setting.enabledSql(':accountId')}`,
      { ...e, details: e.details === null ? null : JSON.stringify(e.details) },
      { prepare: true },
    );
  }

  /** Newest first, after the cursor `after` (occurredAt, id) when given. */
  list(
    accountId: number,
    filter: AuditEventFilter,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<AuditEventRow[]> {
    const params: Record<string, unknown> = { accountId };
    const where = ['e.account_id = :accountId'];
    for (const key of Object.keys(FILTERS) as Array<keyof AuditEventFilter>) {
      if (filter[key] === undefined) continue;
      where.push(FILTERS[key]);
      params[key] = filter[key];
    }
    const keyset = keysetPredicate(['e.occurred_at', 'e.id'], 'DESC', after);
    return this.db.query<AuditEventRow>(
      `SELECT e.id::text AS id, ${isoSql('e.occurred_at')} AS "occurredAt", e.actor_type AS "actorType",
              e.actor_id AS "actorId", e.actor_email AS "actorEmail", e.action, e.method, e.path,
              e.target_type AS "targetType", e.target_id AS "targetId", e.request_id AS "requestId",
              e.outcome, e.status_code AS "statusCode", e.details
       FROM audit_events e
       WHERE ${where.join(' AND ')} AND ${keyset.sql}
       ORDER BY e.occurred_at DESC, e.id DESC
       LIMIT :limit`,
      { ...params, ...keyset.params, limit },
    );
  }
}
