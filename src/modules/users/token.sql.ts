import { grantedActionsSql } from '../../core/auth/grants.fragments.js';

/**
 * One query resolves a token to its user, the user's groups, the roles they hold directly or
 * through a group, and the actions those carry (account-wide, on some resource, and on every
 * resource of a type: `typeActions`, as `Type:Action`). Revoked, expired and deactivated
 * credentials resolve to nothing. The grants come from core/auth's fragment. One `:tokenHash`
 * parameter. Plain text with no framework in it, so the bench baseline runs it too
 * (through `src/hot-paths.ts`).
 */
export const TOKEN_SQL = `
WITH k AS (
  SELECT k.id, k.last_used_at, k.expires_at, k.user_id
  FROM api_keys k
  WHERE k.token_hash = :tokenHash AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
), u AS (
  SELECT u.id, u.account_id, u.email, u.default_roles, g.group_ids,
         COALESCE(ARRAY(
           SELECT ur.role_id FROM user_roles ur WHERE ur.user_id = u.id
           UNION
           SELECT gr.role_id FROM group_roles gr WHERE gr.group_id = ANY(g.group_ids)
         ), '{}') AS role_ids
  FROM users u JOIN k ON k.user_id = u.id
  CROSS JOIN LATERAL (
    SELECT COALESCE(ARRAY(SELECT gm.group_id FROM group_members gm WHERE gm.user_id = u.id), '{}') AS group_ids
  ) g
  WHERE u.is_deactivated = false
), p AS (
  SELECT held.resource_type, held.resource_id, held.action
  FROM u CROSS JOIN LATERAL (${grantedActionsSql({
    accountId: 'u.account_id',
    userId: 'u.id',
    roleIds: 'u.role_ids',
    groupIds: 'u.group_ids',
  })}) held
)
SELECT k.id AS "keyId", k.last_used_at AS "lastUsedAt", k.expires_at AS "expiresAt", u.id AS "userId", u.account_id AS "accountId",
       u.email, u.default_roles AS "defaultRoles", u.role_ids AS "roleIds", u.group_ids AS "groupIds",
       COALESCE(ARRAY(SELECT DISTINCT action FROM p WHERE resource_type = 'Global'), '{}') AS "globalActions",
       COALESCE(ARRAY(SELECT DISTINCT action FROM p WHERE resource_type <> 'Global'), '{}') AS "objectActions",
       COALESCE(ARRAY(SELECT DISTINCT resource_type || ':' || action FROM p
         WHERE resource_type <> 'Global' AND resource_id = '*'), '{}') AS "typeActions"
FROM u JOIN k ON k.user_id = u.id`;

/** Records that key `:keyId` was used, at most once a minute (a write per request would bound reads by the disk). */
export const TOUCH_KEY_SQL = `UPDATE api_keys SET last_used_at = now()
  WHERE id = :keyId AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`;

/**
 * What each user of `:userIds` (an `integer[]`) in account `:accountId` holds, as {@link TOKEN_SQL}
 * reads it for a token's user, without a key: deactivated users resolve to nothing.
 */
export const USER_PRINCIPALS_SQL = `
WITH u AS (
  SELECT u.id, u.account_id, u.email, u.default_roles, g.group_ids,
         COALESCE(ARRAY(
           SELECT ur.role_id FROM user_roles ur WHERE ur.user_id = u.id
           UNION
           SELECT gr.role_id FROM group_roles gr WHERE gr.group_id = ANY(g.group_ids)
         ), '{}') AS role_ids
  FROM users u
  CROSS JOIN LATERAL (
    SELECT COALESCE(ARRAY(SELECT gm.group_id FROM group_members gm WHERE gm.user_id = u.id), '{}') AS group_ids
  ) g
  WHERE u.account_id = :accountId AND u.id = ANY(:userIds) AND u.is_deactivated = false
)
SELECT u.id AS "userId", u.account_id AS "accountId", u.email, u.default_roles AS "defaultRoles",
       u.role_ids AS "roleIds", u.group_ids AS "groupIds", a.global AS "globalActions",
       a.object AS "objectActions", a.type AS "typeActions"
FROM u CROSS JOIN LATERAL (
  SELECT COALESCE(array_agg(DISTINCT held.action) FILTER (WHERE held.resource_type = 'Global'), '{}') AS global,
         COALESCE(array_agg(DISTINCT held.action) FILTER (WHERE held.resource_type <> 'Global'), '{}') AS object,
         COALESCE(array_agg(DISTINCT held.resource_type || ':' || held.action)
           FILTER (WHERE held.resource_type <> 'Global' AND held.resource_id = '*'), '{}') AS type
  FROM (${grantedActionsSql({
    accountId: 'u.account_id',
    userId: 'u.id',
    roleIds: 'u.role_ids',
    groupIds: 'u.group_ids',
  })}) held
) a
ORDER BY u.id`;
