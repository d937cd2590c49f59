import { Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import type { EmbedPrincipal } from '../auth/embed-principal.js';
import type { Principal } from '../auth/principal.js';
import { auditTarget } from './audit-target.js';

/** The methods that change something: the ones recorded. */
export const MUTATIONS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the guard and the audit hooks leave on a request. */
export type AuditedRequest = Request & {
  id?: string;
  principal?: Principal;
  embedPrincipal?: EmbedPrincipal;
  /** The handler's name (the operation id), set by the access guard. */
  operationId?: string;
  /** Set once the request is recorded, so the filter never records it twice. */
  audited?: boolean;
};

/**
 * The one place mutations are recorded. The audit interceptor calls it when a handler
 * finishes; the exception filter calls it for every refused or failed request, including those
 * the guard refuses before any handler runs. Rows are written only while the account has
 * `auditLogEnabled` on, by one statement that checks the setting.
 */
@Injectable()
export class AuditService {
  private readonly logger = new Logger(AuditService.name);

  constructor(private readonly dataSource: DataSource) {}

  async record(req: AuditedRequest, statusCode: number, responseBody?: unknown): Promise<void> {
    if (req.audited || !MUTATIONS.has(req.method) || !req.operationId) return;
    const actor = req.principal
      ? {
          type: 'user',
          id: req.principal.userId,
          email: req.principal.email,
          account: req.principal.accountId,
        }
      : req.embedPrincipal
        ? {
            type: 'embed_user',
            id: req.embedPrincipal.embedUserId,
            email: null,
            account: req.embedPrincipal.accountId,
          }
        : null;
    if (!actor) return;
    req.audited = true;
    const template = (req.route as { path?: unknown } | undefined)?.path;
    const responseId =
      responseBody && typeof responseBody === 'object' ? (responseBody as { id?: unknown }).id : undefined;
    const target = auditTarget(
      typeof template === 'string' ? template : req.path,
      req.operationId,
      req.params as Record<string, string | undefined>,
      responseId,
    );
    try {
      await this.dataSource.query(
        `INSERT INTO audit_events (account_id, actor_type, actor_id, actor_email, action, method, path,
           target_type, target_id, request_id, outcome, status_code)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
         WHERE EXISTS (SELECT 1 FROM tenant_settings s WHERE s.account_id = $1 AND s.audit_log_enabled)`,
        [
          actor.account,
          actor.type,
          actor.id,
          actor.email,
          req.operationId.slice(0, 100),
          req.method,
          req.path.slice(0, 2048),
          target.type?.slice(0, 64) ?? null,
          target.id,
          String(req.id ?? '').slice(0, 128),
          statusCode < 400 ? 'success' : 'failure',
          statusCode,
        ],
      );
    } catch (err) {
      // The mutation itself has already happened: report the lost record, do not fail the request.
      this.logger.error({ err, reqId: req.id }, 'could not record an audit event');
    }
  }
}
