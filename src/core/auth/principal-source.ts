/**
 * What a user holds, read in one round trip: the user, their groups, the roles they hold directly
 * or through a group, and the actions those carry (account-wide, on some resource, and on every
 * resource of a type).
 */
export interface UserPrincipalRow {
  userId: number;
  accountId: number;
  email: string;
  defaultRoles: string[];
  roleIds: number[];
  groupIds: number[];
  /** Actions of `Global` policies. */
  globalActions: string[];
  /** Actions held on at least one individual resource. */
  objectActions: string[];
  /** `Type:Action` of policies on every resource of a type. */
  typeActions: string[];
}

/** What one token resolves to, on every authenticated request: the key and its user's {@link UserPrincipalRow}. */
export interface TokenPrincipalRow extends UserPrincipalRow {
  keyId: number;
  lastUsedAt: Date | null;
  /** When the key stops working (a cached principal never outlives it). */
  expiresAt: Date | null;
}

/**
 * Where tokens and their users live. Core authenticates every request but owns neither API keys
 * nor users: the users module implements this over its tables (joining the grants fragment of
 * `grants.fragments.ts`) and provides it globally, so the guard finds it without core importing
 * a module.
 */
export abstract class PrincipalSource {
  /**
   * The principal of the live key whose SHA-256 is `tokenHash`, or null when the key is unknown,
   * revoked or expired, or its user is deactivated.
   */
  abstract byTokenHash(tokenHash: string): Promise<TokenPrincipalRow | null>;

  /** Records that a key was just used (writes at most once a minute per key). */
  abstract touch(keyId: number): Promise<void>;

  /**
   * What each of `userIds` of the account holds now, without a key (deciding whether someone
   * other than the caller holds an action: the merge gate's reviewers). Unknown ids, other
   * accounts' users and deactivated users are left out.
   */
  abstract byUserIds(accountId: number, userIds: readonly number[]): Promise<UserPrincipalRow[]>;
}
