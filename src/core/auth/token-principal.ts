import { Action, builtInRoleActions, expandActions } from './action.js';
import type { Principal } from './principal.js';
import type { TokenPrincipalRow, UserPrincipalRow } from './principal-source.js';

/**
 * Plain functions with no framework in them: the bench baseline builds its principals with them
 * too (through `src/hot-paths.ts`).
 */

/** `Type:Action` pairs as expanded actions by resource type. */
function byType(pairs: readonly string[]): Map<string, ReadonlySet<Action>> {
  const grouped = new Map<string, string[]>();
  for (const pair of pairs) {
    const at = pair.indexOf(':');
    const type = pair.slice(0, at);
    grouped.set(type, [...(grouped.get(type) ?? []), pair.slice(at + 1)]);
  }
  return new Map([...grouped].map(([type, actions]) => [type, expandActions(actions)]));
}

export /**
 * The principal of a token row: built-in roles and grants expanded into action sets. A user row
 * without a key (`PrincipalSource.byUserIds`) gives a principal with `apiKeyId` 0, to decide
 * access with, never to authenticate.
 */
function toPrincipal(row: TokenPrincipalRow | UserPrincipalRow): Principal {
  const actions = expandActions([...builtInRoleActions(row.defaultRoles), ...row.globalActions]);
  return {
    userId: row.userId,
    accountId: row.accountId,
    email: row.email,
    apiKeyId: 'keyId' in row ? row.keyId : 0,
    roleIds: row.roleIds,
    groupIds: row.groupIds,
    actions,
    objectActions: expandActions(row.objectActions),
    typeActions: byType(row.typeActions),
    isAdmin: actions.has(Action.All),
  };
}
