import type { Action } from './action.js';

/** The authenticated caller, resolved once per request by the global guard. */
export interface Principal {
  userId: number;
  accountId: number;
  email: string;
  apiKeyId: number;
  /** Custom roles assigned to the user. */
  roleIds: number[];
  /** Actions held on every resource of the account (built-in roles, Global policies), expanded. */
  actions: ReadonlySet<Action>;
  /** Actions held on at least one individual resource through object-level grants, expanded. */
  objectActions: ReadonlySet<Action>;
  isAdmin: boolean;
}
