import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../auth/principal.js';
import { isoSql, queryRows } from '../database/sql.js';
import { errorsOf } from '../http/api-error.js';
import { buildPage, fetchLimit, keysetPredicate, resolvePaging, type Page } from '../http/pagination.js';
import type { AuditEventDto, AuditLogQueryDto } from './audit-log.dto.js';

export const auditError = errorsOf('audit_log_disabled', 'invalid_time_range');

type AuditRow = Omit<AuditEventDto, 'id'> & { id: string };

/** Reads an account's audit log, newest first. */
@Injectable()
export class AuditLogService {
  constructor(private readonly dataSource: DataSource) {}

  async list(actor: Principal, query: AuditLogQueryDto): Promise<Page<AuditEventDto>> {
    const [settings] = await queryRows<{ enabled: boolean }>(
      this.dataSource,
      `SELECT audit_log_enabled AS enabled FROM tenant_settings WHERE account_id = $1`,
      [actor.accountId],
    );
    if (!settings?.enabled) {
      throw auditError(
        'audit_log_disabled',
        'The audit log is off for this account; turn on auditLogEnabled with PUT /api/v1/tenant/settings',
      );
    }
    if (query.from && query.to && Date.parse(query.from) >= Date.parse(query.to)) {
      throw auditError('invalid_time_range', 'from must be earlier than to');
    }
    const paging = resolvePaging(query, ['date', 'number']);
    const params: unknown[] = [actor.accountId];
    const where = ['e.account_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (query.actorId !== undefined) add('e.actor_id = ?', query.actorId);
    if (query.actorType !== undefined) add('e.actor_type = ?', query.actorType);
    if (query.action !== undefined) add('e.action = ?', query.action);
    if (query.targetType !== undefined) add('e.target_type = ?', query.targetType);
    if (query.targetId !== undefined) add('e.target_id = ?', query.targetId);
    if (query.outcome !== undefined) add('e.outcome = ?', query.outcome);
    if (query.from !== undefined) add('e.occurred_at >= ?', query.from);
    if (query.to !== undefined) add('e.occurred_at < ?', query.to);
    const keyset = keysetPredicate(
      ['e.occurred_at', 'e.id'],
      'DESC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const rows = await queryRows<AuditRow>(
      this.dataSource,
      `SELECT e.id::text AS id, ${isoSql('e.occurred_at')} AS "occurredAt", e.actor_type AS "actorType",
              e.actor_id AS "actorId", e.actor_email AS "actorEmail", e.action, e.method, e.path,
              e.target_type AS "targetType", e.target_id AS "targetId", e.request_id AS "requestId",
              e.outcome, e.status_code AS "statusCode"
       FROM audit_events e
       WHERE ${where.join(' AND ')} AND ${keyset.sql}
       ORDER BY e.occurred_at DESC, e.id DESC
       LIMIT ${fetchLimit(paging)}`,
      [...params, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.occurredAt, Number(r.id)]);
  }
}
