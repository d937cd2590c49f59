/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
import { NO_EMAIL_DOMAIN } from './no-email.js';

/** A user as other resources show their owner: `{id, email, firstName, picture}`. */
export interface ResourceOwner {
  id: number;
  email: string;
  firstName: string | null;
  picture: string | null;
}

/**
 * Joins the user whose id is the caller's expression `userId` as `alias` (a LEFT JOIN unless
 * `inner`). Read its {@link resourceOwnerSql}.
 */
export const userJoin = (userId: string, alias: string, kind: 'LEFT' | 'INNER' = 'LEFT'): string =>
  `${kind} JOIN users ${alias} ON ${alias}.id = ${userId}`;

/** The {@link ResourceOwner} JSON of the user joined as `alias` by {@link userJoin}; NULL when none. */
export const resourceOwnerSql = (alias: string): string =>
  `CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object('id', ${alias}.id, 'email', ${alias}.email,
     'firstName', ${alias}.first_name, 'picture', ${alias}.picture) END`;

/** A boolean: the user whose id is the caller's expression `userId` exists. */
export const userExistsSql = (userId: string): string =>
  `EXISTS (SELECT 1 FROM users ux WHERE ux.id = ${userId})`;

/** Joins the custom role whose id is the caller's expression `roleId` as `alias` (inner join). */
export const roleJoin = (roleId: string, alias: string): string =>
  `JOIN roles ${alias} ON ${alias}.id = ${roleId}`;

/** A boolean: the user whose id is the caller's expression `userId` is in the account `accountId` (an expression). */
export const userInAccountSql = (userId: string, accountId: string): string =>
  `EXISTS (SELECT 1 FROM users ua WHERE ua.id = ${userId} AND ua.account_id = ${accountId})`;

/** The names (a `varchar[]`, sorted) of the groups whose ids are in the caller's `integer[]` expression `groupIds`. */
export const groupNamesSql = (groupIds: string): string =>
  `ARRAY(SELECT gn.name FROM groups gn WHERE gn.id = ANY(${groupIds}) ORDER BY gn.name)`;

/**
 * The directory view of users and groups as SQL, for filters compiled over it (SCIM's filter
 * compiler): what each attribute an identity provider names is in `users u` and `groups g`, the
 * aliases of `DirectoryService.findUsers` and `findGroups`. Attribute names are lowercased.
 */
export interface DirectoryColumn {
  kind: 'column';
  type: 'string' | 'boolean' | 'dateTime' | 'id';
  /** An SQL expression over the alias of the view (or of the enclosing `some`). */
  expr: string;
  caseExact: boolean;
  /** The column is stored lowercased: compare it directly with the lowercased value (uses its index). */
  lowered: boolean;
  /**
   * The expression is never NULL: comparisons need no COALESCE, which would hide them from the
   * indexes (`userName eq`, a group's `displayName eq`: every identity provider's lookup).
   */
  notNull: boolean;
}

/** An attribute with sub-attributes, each a column of the same row. */
export interface DirectoryComplex {
  kind: 'complex';
  subs: Record<string, DirectoryColumn>;
}

/** A multi-valued attribute: its values are rows of another table. */
export interface DirectoryMulti {
  kind: 'multi';
  /** Wraps a condition on one value's sub-attributes into "some value matches". */
  some: (condition: string) => string;
  subs: Record<string, DirectoryColumn>;
}

export type DirectoryAttribute = DirectoryColumn | DirectoryComplex | DirectoryMulti;

const directoryColumn = (
  type: DirectoryColumn['type'],
  expr: string,
  { caseExact = false, lowered = false, notNull = false } = {},
): DirectoryColumn => ({ kind: 'column', type, expr, caseExact, lowered, notNull });

const EXACT = { caseExact: true, notNull: true };

/** Users, as alias `u`. */
export const DIRECTORY_USER_ATTRIBUTES: Readonly<Record<string, DirectoryAttribute>> = {
  id: directoryColumn('id', 'u.id', EXACT),
  externalid: directoryColumn('string', 'u.external_id', { caseExact: true }),
  username: directoryColumn('string', 'u.username', { notNull: true }),
  name: {
    kind: 'complex',
    subs: {
      givenname: directoryColumn('string', 'u.first_name'),
      familyname: directoryColumn('string', 'u.last_name'),
      formatted: directoryColumn('string', `NULLIF(concat_ws(' ', u.first_name, u.last_name), '')`),
    },
  },
  displayname: directoryColumn('string', 'u.display_name'),
  title: directoryColumn('string', 'u.title'),
  active: directoryColumn('boolean', 'NOT u.is_deactivated', EXACT),
  // At most one email per user: "some value matches" is the condition on it, unless the user
  // has none (the placeholder of no-email.ts, which SCIM never shows).
  emails: {
    kind: 'multi',
    some: (c) => `(u.email NOT LIKE '%@${NO_EMAIL_DOMAIN}' AND ${c})`,
    subs: {
      value: directoryColumn('string', 'u.email', { lowered: true, notNull: true }),
      type: directoryColumn('string', `'work'`, { notNull: true }),
      primary: directoryColumn('boolean', 'TRUE', EXACT),
    },
  },
  groups: {
    kind: 'multi',
    some: (c) =>
      `EXISTS (SELECT 1 FROM group_members gm JOIN groups g ON g.id = gm.group_id WHERE gm.user_id = u.id AND ${c})`,
    subs: {
      value: directoryColumn('id', 'gm.group_id', EXACT),
      display: directoryColumn('string', 'g.name', EXACT),
      type: directoryColumn('string', `'direct'`, { notNull: true }),
    },
  },
  meta: {
    kind: 'complex',
    subs: {
      created: directoryColumn('dateTime', 'u.created_at', { notNull: true }),
      lastmodified: directoryColumn('dateTime', 'u.updated_at', { notNull: true }),
      resourcetype: directoryColumn('string', `'User'`, EXACT),
    },
  },
};

/** Groups, as alias `g`. */
export const DIRECTORY_GROUP_ATTRIBUTES: Readonly<Record<string, DirectoryAttribute>> = {
  id: directoryColumn('id', 'g.id', EXACT),
  externalid: directoryColumn('string', 'g.external_id', { caseExact: true }),
  displayname: directoryColumn('string', 'g.name', EXACT),
  members: {
    kind: 'multi',
    some: (c) =>
      `EXISTS (SELECT 1 FROM group_members gm JOIN users mu ON mu.id = gm.user_id WHERE gm.group_id = g.id AND ${c})`,
    subs: {
      value: directoryColumn('id', 'gm.user_id', EXACT),
      display: directoryColumn('string', 'COALESCE(mu.display_name, mu.username)', { notNull: true }),
      type: directoryColumn('string', `'User'`, EXACT),
    },
  },
  meta: {
    kind: 'complex',
    subs: {
      created: directoryColumn('dateTime', 'g.created_at', { notNull: true }),
      lastmodified: directoryColumn('dateTime', 'g.updated_at', { notNull: true }),
      resourcetype: directoryColumn('string', `'Group'`, EXACT),
    },
  },
};
