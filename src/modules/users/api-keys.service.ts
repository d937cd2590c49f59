import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { issueToken } from '../../core/auth/token.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import type { ApiKeyCreateDto, ApiKeyCreatedDto, ApiKeyDto, ApiKeysQueryDto } from './dto/api-key.dto.js';
import { ApiKeysRepository, type ApiKeyRow } from './api-keys.repository.js';

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
  constructor(private readonly repo: ApiKeysRepository) {}

  async list(actor: Principal, query: ApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.repo.page(actor.accountId, actor.userId, afterId, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.id], toDto);
  }

  /** One of the caller's live keys, as the list shows it (`GET /api-keys/{id}`). */
  async get(actor: Principal, id: number): Promise<ApiKeyDto> {
    const row = await this.repo.find(actor.accountId, actor.userId, id);
    if (!row) throw notFound('ApiKey', id);
    return toDto(row);
  }

  async create(actor: Principal, dto: ApiKeyCreateDto): Promise<ApiKeyCreatedDto> {
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw coreError('validation_failed', ['expiresAt must be in the future']);
    }
    return this.issue(actor.accountId, actor.userId, dto.name, expiresAt);
  }

  /**
   * Issues a key for a user (joining the caller's unit of work when one is open); also used by
   * the admin command line and the embedded bootstrap.
   */
  async issue(
    accountId: number,
    userId: number,
    name: string,
    expiresAt: Date | null = null,
  ): Promise<ApiKeyCreatedDto> {
    const issued = issueToken();
    const row = await this.repo.insert({
      accountId,
      userId,
      name,
      tokenHash: issued.hash,
      tokenPrefix: issued.prefix,
      expiresAt,
    });
    return { ...toDto(row), token: issued.token };
  }

  async revoke(actor: Principal, id: number): Promise<void> {
    if (!(await this.repo.revoke(actor.accountId, actor.userId, id))) throw notFound('ApiKey', id);
  }
}
