/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
export {};

/**
 * A boolean: the deployment whose id is the caller's expression `deploymentId` belongs to the
 * account `accountId` (an expression too, such as `:accountId`).
 */
export const deploymentInAccountSql = (deploymentId: string, accountId: string): string =>
  `EXISTS (SELECT 1 FROM deployments dx WHERE dx.id = ${deploymentId} AND dx.account_id = ${accountId})`;
