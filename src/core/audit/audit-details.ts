import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/** What an audit entry records beyond its request: a JSON object, shown as the entry's `details`. */
export type AuditDetailsValue = Record<string, unknown>;

/**
 * Adds details to the audit entry of the current request (merged key by key into what was added
 * before). The entry is written when the request ends, successful or not, so details added before
 * a failure are recorded with the failure.
 */
export type AuditNote = (details: AuditDetailsValue) => void;

/** Where {@link AuditNote} keeps the details on the request until the entry is written. */
export interface AuditDetailsCarrier {
  auditDetails?: AuditDetailsValue;
}

/**
 * A handler parameter: the {@link AuditNote} of the request, for a handler whose entry must say
 * more than the route (a merge that overrode the merge gate: docs/audit-log.md, "Details"). The
 * handler hands it to its service; nothing else reaches the request.
 */
export const AuditDetails = createParamDecorator((_: unknown, ctx: ExecutionContext): AuditNote => {
  const req = ctx.switchToHttp().getRequest<AuditDetailsCarrier>();
  return (details) => {
    req.auditDetails = { ...req.auditDetails, ...details };
  };
});
