import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { JsonCache } from '../../core/cache/json-cache.js';
import { AppConfig } from '../../core/config/app-config.js';
import type { PythonAnalysisFilteredRunDto } from './dto/python-run.dto.js';

/** What a cached answer is keyed by: the run's inputs and who it ran as. */
export interface PythonRunKey {
  accountId: number;
  deploymentId: number;
  embedUserId: number;
  /** Rows depend on it (row-level security): two sessions of one user may differ. */
  securityContext: Record<string, unknown> | null;
  reportId: number;
  code: string;
  sqlQuery: string;
}

/**
 * Successful python runs, reused for `PYTHON_RUN_CACHE_SECONDS` by the same (report, code, SQL,
 * user and security context). In Redis when the service has one, so every API replica shares it;
 * else in this process's memory (bounded). Fails open (see JsonCache). Keys are SHA-256 of the
 * inputs, so the code, the SQL and the security context are never Redis keys.
 */
@Injectable()
export class PythonRunCache implements OnApplicationShutdown {
  private readonly cache: JsonCache<PythonAnalysisFilteredRunDto>;

  constructor(config: AppConfig) {
    this.cache = new JsonCache({
      name: 'python run results',
      redisUrl: config.queue.redisUrl,
      keyPrefix: `${config.queue.prefix}:python-run`,
      ttlSeconds: config.pythonRuns.cacheSeconds,
      memoryMaxEntries: 500,
      memoryMaxBytes: 64 * 1024 * 1024,
      maxValueBytes: 16 * 1024 * 1024,
      logger: new Logger('PythonRunCache'),
    });
  }

  keyOf(key: PythonRunKey): string {
    const parts = [
      key.accountId,
      key.deploymentId,
      key.embedUserId,
      canonicalJson(key.securityContext),
      key.reportId,
      key.code,
      key.sqlQuery,
    ];
    return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  }

  get(key: string): Promise<PythonAnalysisFilteredRunDto | undefined> {
    return this.cache.get(key);
  }

  set(key: string, value: PythonAnalysisFilteredRunDto): Promise<void> {
    return this.cache.set(key, value);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.close();
  }
}

/** JSON with object keys sorted, so equal contexts give equal keys whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
