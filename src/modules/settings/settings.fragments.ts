/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */

/**
 * A boolean SQL expression: whether the account `accountId` (an SQL expression, e.g.
 * `:accountId`) keeps an audit log. False for an account without a settings row.
 */
export const auditLogEnabledSql = (accountId: string): string =>
  `EXISTS (SELECT 1 FROM tenant_settings s WHERE s.account_id = ${accountId} AND s.audit_log_enabled)`;
