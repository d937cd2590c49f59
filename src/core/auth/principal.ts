import type { Action } from './action.js';

/** The authenticated caller, resolved once per request by the global guard. */
export interface Principal {
  userId: number;
  accountId: number;
  email: string;
  apiKeyId: number;
  /** Custom roles assigned to the user directly or through one of their groups. */
  roleIds: number[];
  /** Groups the user is a member of; their grants apply to the user. */
  groupIds: number[];
  /** Actions held on every resource of the account (built-in roles, Global policies), expanded. */
  actions: ReadonlySet<Action>;
  /** Actions held on at least one individual resource through object-level grants, expanded. */
  objectActions: ReadonlySet<Action>;
  /**
   * Actions held on every resource of a type (a policy whose `resources` is `["All"]`), by
   * resource type, expanded. Also counted in `objectActions`.
   */
  typeActions: ReadonlyMap<string, ReadonlySet<Action>>;
  isAdmin: boolean;
  /**
   * Set for a credential that reaches one object only (a git read credential): the principal
   * holds `actions` on that object (and what is inside it) and nothing anywhere else, whatever
   * the other fields say. `AccessService` applies it.
   */
  scope?: { type: 'Deployment'; id: number; actions: ReadonlySet<Action> };
}
