import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  ipKeyGenerator,
  MemoryStore,
  rateLimit,
  type ClientRateLimitInfo,
  type IncrementResponse,
  type Options,
  type Store,
} from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import { AppConfig } from '../config/app-config.js';
import { hashToken } from '../auth/token.js';
import { errorBody, sendError } from './exception.filter.js';

const PROBES = /^\/health\/(live|ready)\/?$/;
/** Longest wait for Redis on one request; past it the request goes on unlimited. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/** The rate-limit key: the token's hash when one is sent, else the client address. */
function rateLimitKey(req: Request): string {
  const auth = req.headers.authorization;
  const token = auth ? /^(?:Bearer|Api-Key) +(\S+)/i.exec(auth)?.[1] : undefined;
  return token ? `t:${hashToken(token)}` : `ip:${ipKeyGenerator(req.ip ?? '')}`;
}

const addressKey = (req: Request) => `ip:${ipKeyGenerator(req.ip ?? '')}`;

/**
 * The Redis connection of the rate limiters, made only when an API process with `REDIS_URL`
 * configures them, and closed at shutdown. Its own client, with the Bull client's settings
 * (`queue/redis.ts`): no offline queue and no retries, so a command fails at once while Redis is
 * away, plus a command timeout, so a frozen Redis delays a request by at most that.
 */
@Injectable()
export class RateLimitRedis implements OnApplicationShutdown {
  private client: Redis | null = null;

  constructor(private readonly config: AppConfig) {}

  connection(): Redis | null {
    const url = this.config.queue.redisUrl;
    if (!url) return null;
    if (!this.client) {
      this.client = new Redis(url, {
        connectTimeout: 2_000,
        retryStrategy: (times) => Math.min(times * 250, 3_000),
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      });
      // ioredis reports every failed reconnection here; the stores log the outage once instead.
      this.client.on('error', () => undefined);
    }
    return this.client;
  }

  async onApplicationShutdown(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (client.status === 'ready') await client.quit().catch(() => undefined);
    client.disconnect();
  }
}

class StoreUnavailable extends Error {}

/**
 * A Redis store that fails open: while Redis is unreachable every call fails at once (or after
 * the command timeout) with {@link StoreUnavailable}, which the limiters treat as "not limited",
 * and the outage is logged once, as is the recovery. The Lua scripts are (re)loaded on first use
 * after a failure, since `RedisStore` loads them only at init, which may fall in an outage.
 */
class FailOpenRedisStore implements Store {
  private readonly inner: RedisStore;
  private loaded: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly client: Redis,
    readonly prefix: string,
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {
    this.inner = new RedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) =>
        client.call(command, ...args) as Promise<number | string | boolean | (number | string | boolean)[]>,
    });
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.guard((store) => store.get(key));
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.guard((store) => store.increment(key));
  }

  decrement(key: string): Promise<void> {
    return this.guard((store) => store.decrement(key));
  }

  resetKey(key: string): Promise<void> {
    return this.guard((store) => store.resetKey(key));
  }

  private async guard<T>(work: (store: RedisStore) => Promise<T>): Promise<T> {
    try {
      if (this.client.status !== 'ready') throw new Error(`Redis connection is ${this.client.status}`);
      this.loaded ??= this.inner.init({ windowMs: this.windowMs } as Options);
      await this.loaded;
      const result = await work(this.inner);
      if (this.failing) {
        this.failing = false;
        this.logger.log('Redis is back: rate limits are enforced again');
      }
      return result;
    } catch (err) {
      this.loaded = null;
      if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          `Redis is unavailable (${err instanceof Error ? err.message : String(err)}): requests are not rate-limited until it is back`,
        );
      }
      throw new StoreUnavailable('rate-limit store unavailable');
    }
  }
}

function memoryStore(windowMs: number): Store {
  const store = new MemoryStore();
  store.init({ windowMs } as Options);
  return store;
}

/**
 * Two limits, counted in Redis under `QUEUE_PREFIX` when `REDIS_URL` is set (so every replica
 * shares them), else in process memory:
 * - failed authentication per client address: once `AUTH_FAILURE_LIMIT_MAX` answers of 401 were
 *   sent to an address within the window, it gets 429 before any token is looked up, until the
 *   window passes (junk tokens would otherwise each get a budget of their own, and each cost a
 *   database lookup);
 * - requests per token (per client address without one): `RATE_LIMIT_MAX` per window.
 * The probes are never limited. When Redis is unavailable, requests go on unlimited (logged).
 */
export function configureRateLimits(app: NestExpressApplication, config: AppConfig): void {
  const { http } = config;
  const windowMs = http.rateLimitWindowSeconds * 1000;
  const logger = new Logger('RateLimit');
  const redis = app.get(RateLimitRedis).connection();
  const store = (name: string): Store =>
    redis
      ? new FailOpenRedisStore(redis, `${config.queue.prefix}:${name}:`, windowMs, logger)
      : memoryStore(windowMs);

  if (http.authFailureLimitMax > 0) {
    app.use(authFailureLimit(store('auth-failures'), http.authFailureLimitMax));
  }
  if (http.rateLimitMax > 0) {
    app.use(
      rateLimit({
        windowMs,
        limit: http.rateLimitMax,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        keyGenerator: rateLimitKey,
        skip: (req) => PROBES.test(req.path),
        store: store('rate-limit'),
        passOnStoreError: true,
        // The store logs outages itself; anything else is a misconfiguration worth seeing.
        logger: {
          warn: (...args: unknown[]) => logger.warn(args.map(String).join(' ')),
          error: (err: unknown, ...rest: unknown[]) => {
            if (!(err instanceof StoreUnavailable)) logger.error([err, ...rest].map(String).join(' '));
          },
        },
        handler: (req, res) => tooManyRequests(req, res, 'Too many requests for this token'),
      }),
    );
  }
}

/** The 429 of both limits; the caller has set Retry-After (the limiter does it itself). */
function tooManyRequests(req: Request, res: Response, reason: string): void {
  sendError(req, res, errorBody(429, 'rate_limited', `${reason}; retry after the Retry-After delay`));
}

/**
 * Counts the 401 answers per client address. The count is written before the 401 leaves, so a
 * client never sees its answer before it is counted; a spent budget answers 429 with Retry-After
 * up front. Only failures count: any number of requests with a valid token never spend it.
 */
function authFailureLimit(store: Store, max: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (PROBES.test(req.path)) return next();
    const key = addressKey(req);
    void (async () => {
      const info = await Promise.resolve(store.get!(key)).catch(() => undefined);
      const resetMs = info?.resetTime ? info.resetTime.getTime() - Date.now() : 0;
      if (info && info.totalHits >= max && resetMs > 0) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(resetMs / 1000))));
        tooManyRequests(req, res, 'Too many failed authentication attempts from this address');
        return;
      }
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => {
        if (res.statusCode !== 401) return end(...args);
        void Promise.resolve(store.increment(key))
          .catch(() => undefined)
          .finally(() => end(...args));
        return res;
      }) as Response['end'];
      next();
    })().catch(next);
  };
}
