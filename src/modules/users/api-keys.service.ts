import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { issueToken } from '../../core/auth/token.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  type Page,
} from '../../core/http/pagination.js';
import type { ApiKeyCreateDto, ApiKeyCreatedDto, ApiKeyDto, ApiKeysQueryDto } from './dto/api-key.dto.js';
import { usersError } from './users.errors.js';
import { queryRows } from '../../core/database/sql.js';

interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  userId: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

const COLUMNS = `id, name, token_prefix AS prefix, user_id AS "userId", created_at AS "createdAt",
  last_used_at AS "lastUsedAt", expires_at AS "expiresAt"`;

function toDto(row: ApiKeyRow): ApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    userId: row.userId,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

/**
 * Platform API tokens of the caller. The secret is returned once, at creation; only its
 * SHA-256 is stored. Revoked keys disappear from the list and stop working at once.
 */
@Injectable()
export class ApiKeysService {
  constructor(private readonly dataSource: DataSource) {}

  async list(actor: Principal, query: ApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    const paging = resolvePaging(query, ['number']);
    const keyset = keysetPredicate(['id'], 'ASC', paging.mode === 'cursor' ? paging.after : null, 3);
    const rows: ApiKeyRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM api_keys
       WHERE account_id = $1 AND user_id = $2 AND revoked_at IS NULL AND ${keyset.sql}
       ORDER BY id LIMIT ${fetchLimit(paging)}`,
      [actor.accountId, actor.userId, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.id], toDto);
  }

  async create(actor: Principal, dto: ApiKeyCreateDto): Promise<ApiKeyCreatedDto> {
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw coreError('validation_failed', ['expiresAt must be in the future']);
    }
    return this.issue(this.dataSource.manager, actor.accountId, actor.userId, dto.name, expiresAt);
  }

  /** Issues a key for a user; also used by the admin command line and the embedded bootstrap. */
  async issue(
    manager: EntityManager,
    accountId: number,
    userId: number,
    name: string,
    expiresAt: Date | null = null,
  ): Promise<ApiKeyCreatedDto> {
    const issued = issueToken();
    const rows: ApiKeyRow[] = await manager.query(
      `INSERT INTO api_keys (account_id, user_id, name, token_hash, token_prefix, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [accountId, userId, name, issued.hash, issued.prefix, expiresAt],
    );
    return { ...toDto(rows[0]), token: issued.token };
  }

  async revoke(actor: Principal, id: number): Promise<void> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE api_keys SET revoked_at = now()
       WHERE account_id = $1 AND user_id = $2 AND id = $3 AND revoked_at IS NULL RETURNING id`,
      [actor.accountId, actor.userId, id],
    );
    if (rows.length === 0) throw usersError('api_key_not_found', `API key ${id} was not found`);
  }
}
