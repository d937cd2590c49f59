import type { Redis } from 'ioredis';
import { failFastRedis } from '../redis/redis.js';

/** Longest wait for Redis on one lookup; past it the caller goes on as on a miss. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

export interface JsonCacheOptions {
  /** What the cache holds, for the log (`python run results`). */
  name: string;
  /** Redis when the service has one (every process shares the cache), else this process's memory. */
  redisUrl: string | null;
  /** The Redis key prefix (`<QUEUE_PREFIX>:<kind>`); keys are `<prefix>:<key>`. */
  keyPrefix: string;
  /** How long an entry lives; 0 turns the cache off. */
  ttlSeconds: number;
  /** The in-process cache's bounds: entries, and bytes of JSON. */
  memoryMaxEntries: number;
  memoryMaxBytes: number;
  /** A value larger than this, as JSON, is not stored. */
  maxValueBytes: number;
  logger: { log(message: string): void; warn(message: string): void };
}

/**
 * A cache of JSON values by key, with a time to live: in Redis when there is one, so every process
 * shares it, else in this process's memory (bounded, oldest out first). It fails open: while Redis
 * is away every lookup is a miss and nothing is stored, and the outage is logged once. Callers
 * choose keys that hold no secret (a hash of their inputs).
 */
export class JsonCache<T> {
  private client: Redis | null = null;
  /** Settles once the client made on first use is connected, or after the command timeout. */
  private connected: Promise<void> = Promise.resolve();
  private readonly memory = new Map<string, { expiresAt: number; json: string }>();
  private memoryBytes = 0;
  private failing = false;

  constructor(private readonly options: JsonCacheOptions) {}

  async get(key: string): Promise<T | undefined> {
    if (this.options.ttlSeconds === 0) return undefined;
    const redis = await this.redis();
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
    return json ? (JSON.parse(json) as T) : undefined;
  }

  async set(key: string, value: T): Promise<void> {
    if (this.options.ttlSeconds === 0) return;
    const json = JSON.stringify(value);
    const size = Buffer.byteLength(json);
    if (size > this.options.maxValueBytes) return;
    const redis = await this.redis();
    if (redis) {
      await redis.set(this.redisKey(key), json, 'EX', this.options.ttlSeconds).then(
        () => this.recovered(null),
        (error: unknown) => this.failed(error, null),
      );
      return;
    }
    this.forget(key);
    this.memory.set(key, { expiresAt: Date.now() + this.options.ttlSeconds * 1000, json });
    this.memoryBytes += size;
    // A Map iterates in insertion order: the first entries are the oldest.
    for (const [oldest] of this.memory) {
      if (
        this.memory.size <= this.options.memoryMaxEntries &&
        this.memoryBytes <= this.options.memoryMaxBytes
      )
        break;
      this.forget(oldest);
    }
  }

  async close(): Promise<void> {
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
    return `${this.options.keyPrefix}:${key}`;
  }

  /**
   * A client of its own, made on first use: no offline queue, no retries, a command timeout. The
   * first use waits for it to connect (at most the command timeout): with no offline queue, a
   * command sent while it connects fails, which would make every process's first lookup a miss
   * (and a false "Redis failed" warning), even of an entry another process stored.
   */
  private async redis(): Promise<Redis | null> {
    const url = this.options.redisUrl;
    if (!url) return null;
    if (!this.client) {
      const client = failFastRedis(url, REDIS_COMMAND_TIMEOUT_MS);
      this.client = client;
      this.connected = new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          client.off('ready', done);
          client.off('end', done);
          resolve();
        };
        const timer = setTimeout(done, REDIS_COMMAND_TIMEOUT_MS);
        client.once('ready', done);
        client.once('end', done);
      });
    }
    await this.connected;
    return this.client;
  }

  private recovered<V>(value: V): V {
    if (this.failing) {
      this.failing = false;
      this.options.logger.log(`Redis answers again: ${this.options.name} are cached again`);
    }
    return value;
  }

  private failed<V>(error: unknown, value: V): V {
    if (!this.failing) {
      this.failing = true;
      this.options.logger.warn(
        `Redis failed, ${this.options.name} are not cached: ${(error as Error).message}`,
      );
    }
    return value;
  }
}
