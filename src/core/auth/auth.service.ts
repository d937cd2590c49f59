import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Action, builtInRoleActions, expandActions } from './action.js';
import type { Principal } from './principal.js';
import { hashToken, TOKEN_PATTERN } from './token.js';

interface TokenRow {
  keyId: number;
  lastUsedAt: Date | null;
  userId: number;
  accountId: number;
  email: string;
  defaultRoles: string[];
  roleIds: number[];
  globalActions: string[];
  objectActions: string[];
}

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

/** Writing `last_used_at` on every request would turn every read into a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(private readonly dataSource: DataSource) {}

  async authenticate(token: string): Promise<Principal | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    const rows: TokenRow[] = await this.dataSource.query(TOKEN_SQL, [hashToken(token)]);
    const row = rows[0];
    if (!row) return null;
    this.touch(row);
    const actions = expandActions([...builtInRoleActions(row.defaultRoles), ...row.globalActions]);
    return {
      userId: row.userId,
      accountId: row.accountId,
      email: row.email,
      apiKeyId: row.keyId,
      roleIds: row.roleIds,
      actions,
      objectActions: expandActions(row.objectActions),
      isAdmin: actions.has(Action.All),
    };
  }

  private touch(row: TokenRow): void {
    if (row.lastUsedAt && Date.now() - row.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    this.dataSource
      .query(
        `UPDATE api_keys SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [row.keyId],
      )
      .catch((err: unknown) => this.logger.warn(`could not record token use: ${String(err)}`));
  }
}
