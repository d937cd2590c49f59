import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import { errorsOf } from '../errors/api-error.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../http/pagination.js';
import type { AuditEventDto, AuditLogQueryDto } from './audit-log.dto.js';
import { AuditRepository } from './audit.repository.js';

export const auditError = errorsOf('audit_log_disabled', 'invalid_time_range');

/** Reads an account's audit log, newest first. */
@Injectable()
export class AuditLogService {
  constructor(private readonly events: AuditRepository) {}

  async list(actor: Principal, query: AuditLogQueryDto): Promise<Page<AuditEventDto>> {
    if (!(await this.events.isEnabled(actor.accountId))) {
      throw auditError(
        'audit_log_disabled',
        'The audit log is off for this account; turn on auditLogEnabled with PUT /api/v1/tenant/settings',
      );
    }
    if (query.from && query.to && Date.parse(query.from) >= Date.parse(query.to)) {
      throw auditError('invalid_time_range', 'from must be earlier than to');
    }
    const paging = resolvePaging(query, ['date', 'number']);
    const rows = await this.events.list(
      actor.accountId,
      {
        actorId: query.actorId,
        actorType: query.actorType,
        action: query.action,
        targetType: query.targetType,
        targetId: query.targetId,
        outcome: query.outcome,
        from: query.from,
        to: query.to,
      },
      paging.mode === 'cursor' ? paging.after : null,
      fetchLimit(paging),
    );
    return buildPage(rows, paging, (r) => [r.occurredAt, Number(r.id)]);
  }
}
