/**
 * One query resolves a token to its user, the user's roles and the actions they carry.
 * Revoked, expired and deactivated credentials resolve to nothing.
 */
export const TOKEN_SQL = `
WITH k AS (
  SELECT k.id, k.last_used_at, k.user_id
  FROM api_keys k
  WHERE k.token_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
), u AS (
  SELECT u.id, u.account_id, u.email, u.default_roles,
         COALESCE((SELECT array_agg(ur.role_id) FROM user_roles ur WHERE ur.user_id = u.id), '{}') AS role_ids
  FROM users u JOIN k ON k.user_id = u.id
  WHERE u.is_deactivated = false
)
SELECT k.id AS "keyId", k.last_used_at AS "lastUsedAt", u.id AS "userId", u.account_id AS "accountId",
       u.email, u.default_roles AS "defaultRoles", u.role_ids AS "roleIds",
       COALESCE(ARRAY(
         SELECT DISTINCT p.action FROM policies p
         WHERE p.account_id = u.account_id AND p.resource_type = 'Global'
           AND ((p.principal_type = 'user' AND p.principal_id = u.id)
             OR (p.principal_type = 'role' AND p.principal_id = ANY(u.role_ids)))
       ), '{}') AS "globalActions",
       COALESCE(ARRAY(
         SELECT DISTINCT p.action FROM policies p
         WHERE p.account_id = u.account_id AND p.resource_type <> 'Global'
           AND ((p.principal_type = 'user' AND p.principal_id = u.id)
             OR (p.principal_type = 'role' AND p.principal_id = ANY(u.role_ids)))
       ), '{}') AS "objectActions"
FROM u JOIN k ON k.user_id = u.id`;
