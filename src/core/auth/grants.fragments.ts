/**
 * SQL fragments over `policies` (owned by core/auth) for queries of other modules that must read
 * grants in the same round trip (token verification). The text naming the table stays here.
 */

/** SQL expressions (over the caller's aliases) naming who holds grants. */
export interface GrantHolderSql {
  /** The account, an `integer`. */
  accountId: string;
  /** The user, an `integer`. */
  userId: string;
  /** Their custom roles, an `integer[]`. */
  roleIds: string;
  /** Their groups, an `integer[]`. */
  groupIds: string;
}

/**
 * A `SELECT` of the columns `resource_type`, `resource_id` and `action` of every grant held by
 * the user directly, through one of their roles or through one of their groups. Three lookups
 * joined by `UNION ALL`, each answered by the unique index that starts
 * `(account_id, principal_type, principal_id)`: one predicate with `OR` over the principal types
 * would read every grant of the account.
 */
export function grantedActionsSql(holder: GrantHolderSql): string {
  const held = (type: string, match: string) =>
    `SELECT p.resource_type, p.resource_id, p.action FROM policies p
    WHERE p.account_id = ${holder.accountId} AND p.principal_type = '${type}' AND p.principal_id ${match}`;
  return [
    held('user', `= ${holder.userId}`),
    held('role', `= ANY(${holder.roleIds})`),
    held('group', `= ANY(${holder.groupIds})`),
  ].join(' UNION ALL ');
}

/**
 * A `SELECT` of the columns `principal_id` and `action` of the grants to custom roles, in the
 * account `accountId`, of one of `actions` (a `text[]`) on resources of type `resourceType` whose
 * id matches `resourceIdMatch` (`= <expr>` or `= ANY(<expr>)`): all SQL of the caller. Answered
 * by the index `(account_id, resource_type, resource_id)`.
 */
export function roleGrantsOnSql(on: {
  accountId: string;
  resourceType: string;
  resourceIdMatch: string;
  actions: string;
}): string {
  return `SELECT pol.principal_id, pol.action FROM policies pol
    WHERE pol.account_id = ${on.accountId} AND pol.resource_type = ${on.resourceType}
      AND pol.resource_id ${on.resourceIdMatch}
      AND pol.principal_type = 'role' AND pol.action = ANY(${on.actions})`;
}
