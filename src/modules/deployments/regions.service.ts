import { Injectable } from '@nestjs/common';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { DeploymentsRepository } from './deployments.repository.js';
import type { RegionDto } from './dto/deployment.dto.js';

/** The platform's region catalogue (seeded by migration). */
@Injectable()
export class RegionsService {
  constructor(private readonly repository: DeploymentsRepository) {}

  async list(query: PageQueryDto): Promise<LegacyPage<RegionDto>> {
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const { rows, total } = await this.repository.regionsPage(afterId, fetchLimit(paging));
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id]),
      paging,
      total,
    );
  }
}
