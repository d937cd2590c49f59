import { Injectable } from '@nestjs/common';
import { queryRows } from '../../core/database/sql.js';
import { DataSource } from 'typeorm';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import type { RegionDto } from './dto/deployment.dto.js';

/** The platform's region catalogue (seeded by migration). */
@Injectable()
export class RegionsService {
  constructor(private readonly dataSource: DataSource) {}

  async list(query: PageQueryDto): Promise<LegacyPage<RegionDto>> {
    const paging = resolvePaging(query, ['number']);
    const keyset = keysetPredicate(['id'], 'ASC', paging.mode === 'cursor' ? paging.after : null, 1);
    const [rows, count] = await Promise.all([
      queryRows<RegionDto>(
        this.dataSource,
        `SELECT id, name, title, provider, is_public AS "isPublic", is_dedicated AS "isDedicated",
                is_hybrid AS "isHybrid", use_ai_engineer AS "useAiEngineer"
         FROM regions WHERE ${keyset.sql} ORDER BY id LIMIT ${fetchLimit(paging)}`,
        keyset.params,
      ),
      queryRows<{ n: number }>(this.dataSource, `SELECT count(*)::int AS n FROM regions`),
    ]);
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id]),
      paging,
      count[0].n,
    );
  }
}
