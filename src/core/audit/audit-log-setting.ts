/**
 * Whether an account keeps an audit log. The switch is one of the account's tenant settings,
 * whose table a domain module owns: core never names it. That module provides this class
 * (dependency inversion) as a SQL expression, so the audit insert stays one statement that
 * checks the switch, as before.
 */
export abstract class AuditLogSetting {
  /** A boolean SQL expression: whether the account `accountId` (an SQL expression) has the audit log on. */
  abstract enabledSql(accountId: string): string;
}
