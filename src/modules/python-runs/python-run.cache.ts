import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../../core/config/app-config.js';
import type { PythonAnalysisFilteredRunDto } from './dto/python-run.dto.js';
import { failFastRedis } from '../../core/queue/redis.js';

/** Longest wait for Redis on one request; past it the run goes on as a cache miss. */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** The in-process cache (no Redis): at most this many answers, and this many bytes of them. */
const MEMORY_MAX_ENTRIES = 500;
const MEMORY_MAX_BYTES = 64 * 1024 * 1024;

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
 * else in this process's memory (bounded). Fails open: while Redis is away every lookup is a miss
 * and nothing is stored, and the outage is logged once. Keys are SHA-256 of the inputs, so the
 * code, the SQL and the security context are never Redis keys.
 */
@Injectable()
export class PythonRunCache implements OnApplicationShutdown {
  private readonly logger = new Logger('PythonRunCache');
  private client: Redis | null = null;
  private readonly memory = new Map<string, { expiresAt: number; json: string }>();
  private memoryBytes = 0;
  private failing = false;

  constructor(private readonly config: AppConfig) {}

  private get ttlSeconds(): number {
    return this.config.pythonRuns.cacheSeconds;
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

  async get(key: string): Promise<PythonAnalysisFilteredRunDto | undefined> {
    if (this.ttlSeconds === 0) return undefined;
    const redis = this.redis();
    let json: string | null | undefined;
    if (redis) {
      json = await redis.get(this.redisKey(key)).then(
        (value) => this.recovered(value),
        (error: unknown) => this.failed(error, null),
      );
    } else {
      const entry = this.memory.get(key);
      if (entry && entry.expiresAt > Date.now()) json = entry.json;
      else if (entry) this.forget(key);
    }
    return json ? (JSON.parse(json) as PythonAnalysisFilteredRunDto) : undefined;
  }

  async set(key: string, value: PythonAnalysisFilteredRunDto): Promise<void> {
    if (this.ttlSeconds === 0) return;
    const json = JSON.stringify(value);
    const redis = this.redis();
    if (redis) {
      await redis.set(this.redisKey(key), json, 'EX', this.ttlSeconds).then(
        () => this.recovered(null),
        (error: unknown) => this.failed(error, null),
      );
      return;
    }
    const size = Buffer.byteLength(json);
    if (size > MEMORY_MAX_BYTES / 4) return;
    this.forget(key);
    this.memory.set(key, { expiresAt: Date.now() + this.ttlSeconds * 1000, json });
    this.memoryBytes += size;
    // A Map iterates in insertion order: the first entries are the oldest.
    for (const [oldest] of this.memory) {
      if (this.memory.size <= MEMORY_MAX_ENTRIES && this.memoryBytes <= MEMORY_MAX_BYTES) break;
      this.forget(oldest);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (client.status === 'ready') await client.quit().catch(() => undefined);
    client.disconnect();
  }

  private forget(key: string): void {
    const entry = this.memory.get(key);
    if (!entry) return;
    this.memory.delete(key);
    this.memoryBytes -= Buffer.byteLength(entry.json);
  }

  private redisKey(key: string): string {
    return `${this.config.queue.prefix}:python-run:${key}`;
  }

  /** A client of its own, made on first use: no offline queue, no retries, a command timeout. */
  private redis(): Redis | null {
    const url = this.config.queue.redisUrl;
    if (!url) return null;
    // failed() logs an outage once, from the failing commands.
    this.client ??= failFastRedis(url, REDIS_COMMAND_TIMEOUT_MS);
    return this.client;
  }

  private recovered<T>(value: T): T {
    if (this.failing) {
      this.failing = false;
      this.logger.log('Redis answers again: python run results are cached again');
    }
    return value;
  }

  private failed<T>(error: unknown, value: T): T {
    if (!this.failing) {
      this.failing = true;
      this.logger.warn(`Redis failed, python run results are not cached: ${(error as Error).message}`);
    }
    return value;
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
