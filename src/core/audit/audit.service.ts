import { Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import type { EmbedPrincipal } from '../auth/embed-principal.js';
import type { Principal } from '../auth/principal.js';
import type { AuditDetailsCarrier } from './audit-details.js';
import { auditTarget } from './audit-target.js';
import { AuditRepository } from './audit.repository.js';

/** The methods that change something: the ones recorded. */
export const MUTATIONS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the guard and the audit hooks leave on a request. */
export type AuditedRequest = Request &
  AuditDetailsCarrier & {
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

  constructor(private readonly events: AuditRepository) {}

  async record(req: AuditedRequest, statusCode: number, responseBody?: unknown): Promise<void> {
    if (req.audited || !MUTATIONS.has(req.method) || !req.operationId) return;
    const actor = req.principal
      ? {
          type: 'user' as const,
          id: req.principal.userId,
          email: req.principal.email,
          account: req.principal.accountId,
        }
      : req.embedPrincipal
        ? {
            type: 'embed_user' as const,
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
      await this.events.insertIfEnabled({
        accountId: actor.account,
        actorType: actor.type,
        actorId: actor.id,
        actorEmail: actor.email,
        action: req.operationId.slice(0, 100),
        method: req.method,
        path: req.path.slice(0, 2048),
        targetType: target.type?.slice(0, 64) ?? null,
        targetId: target.id,
        requestId: String(req.id ?? '').slice(0, 128),
        outcome: statusCode < 400 ? 'success' : 'failure',
        statusCode,
        details: req.auditDetails ?? null,
      });
    } catch (err) {
      // The mutation itself has already happened: report the lost record, do not fail the request.
      this.logger.error({ err, reqId: req.id }, 'could not record an audit event');
    }
  }
}
