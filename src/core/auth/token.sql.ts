/**
 * One query resolves a token to its user, the user's groups, the roles they hold directly or
 * through a group, and the actions those carry (account-wide, on some resource, and on every
 * resource of a type: `typeActions`, as `Type:Action`). Revoked, expired and deactivated credentials
 * resolve to nothing.
 */
export const TOKEN_SQL = `
WITH k AS (
  SELECT k.id, k.last_used_at, k.user_id
  FROM api_keys k
  WHERE k.token_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
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
  SELECT p.resource_type, p.resource_id, p.action FROM policies p, u
  WHERE p.account_id = u.account_id
    AND ((p.principal_type = 'user' AND p.principal_id = u.id)
      OR (p.principal_type = 'role' AND p.principal_id = ANY(u.role_ids))
      OR (p.principal_type = 'group' AND p.principal_id = ANY(u.group_ids)))
)
SELECT k.id AS "keyId", k.last_used_at AS "lastUsedAt", u.id AS "userId", u.account_id AS "accountId",
       u.email, u.default_roles AS "defaultRoles", u.role_ids AS "roleIds", u.group_ids AS "groupIds",
       COALESCE(ARRAY(SELECT DISTINCT action FROM p WHERE resource_type = 'Global'), '{}') AS "globalActions",
       COALESCE(ARRAY(SELECT DISTINCT action FROM p WHERE resource_type <> 'Global'), '{}') AS "objectActions",
       COALESCE(ARRAY(SELECT DISTINCT resource_type || ':' || action FROM p
         WHERE resource_type <> 'Global' AND resource_id = '*'), '{}') AS "typeActions"
FROM u JOIN k ON k.user_id = u.id`;
