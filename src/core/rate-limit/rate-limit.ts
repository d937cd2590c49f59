import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { ipKeyGenerator, MemoryStore, type Options } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { basicPassword, hashToken } from '../auth/token.js';
import { markLockedOut } from './auth-lockout.js';
import { errorBody, sendError } from '../errors/exception.filter.js';
import { failFastRedis } from '../redis/redis.js';
import { isInternalRead } from '../http/conditional/internal-read.js';

const PROBES = /^\/health\/(live|ready)\/?$/;
/** Longest wait for Redis on one request; past it the request goes on unlimited. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The rate-limit key: the token's hash when one is sent (`Bearer`, `Api-Key`, or the password of
 * `Basic`, as git sends it), else the client address.
 */
function rateLimitKey(req: Request): string {
  const auth = req.headers.authorization;
  const token = auth ? (/^(?:Bearer|Api-Key) +(\S+)/i.exec(auth)?.[1] ?? basicPassword(auth)) : undefined;
  return token ? `t:${hashToken(token)}` : `ip:${ipKeyGenerator(req.ip ?? '')}`;
}

/** A 401 asking for Basic credentials of a request that sent none (see {@link countFailures}). */
const isBasicChallenge = (req: Request, res: Response): boolean =>
  req.headers.authorization === undefined &&
  /^Basic\b/i.test(String(res.getHeader('WWW-Authenticate') ?? ''));

const addressKey = (req: Request) => `ip:${ipKeyGenerator(req.ip ?? '')}`;

/**
 * The Redis connection of the rate limiters, made only when an API process with `REDIS_URL`
 * configures them, and closed at shutdown. Its own client (`failFastRedis`): no offline queue and
 * no retries, so a command fails at once while Redis is away, plus a command timeout, so a frozen
 * Redis delays a request by at most that.
 */
@Injectable()
export class RateLimitRedis implements OnApplicationShutdown {
  private client: Redis | null = null;

  constructor(private readonly config: AppConfig) {}

  connection(): Redis | null {
    const url = this.config.queue.redisUrl;
    if (!url) return null;
    // The stores log an outage once, from their failing commands.
    this.client ??= failFastRedis(url, REDIS_COMMAND_TIMEOUT_MS);
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

/**
 * What the limits say about one request: `lockedOutMs` > 0 when its address spent its budget of
 * failed authentications (for that much longer); `hits` and `resetMs` of the request counter when
 * it is on and its store answered.
 */
interface Admission {
  lockedOutMs: number;
  hits?: number;
  resetMs?: number;
}

/** Where both limits count: Redis (every replica shares it) or this process's memory. */
interface LimitStore {
  /**
   * Tells whether `address` has `failureMax` failed authentications in the window (0: that limit
   * is off), and counts the request against `key` (null: that limit is off).
   */
  admit(address: string, key: string | null): Promise<Admission>;
  /** Counts one failed authentication of `address`. */
  recordFailure(address: string): Promise<void>;
}

/**
 * Both limits in one Redis round trip per request: one script reads the address's failures
 * (how long it stays locked out, 0 when it is not) and counts the request (a fixed window from
 * the first hit, the counter expiring with it). Keys are `<prefix>:auth-failures:<address>` and
 * `<prefix>:rate-limit:<key>`.
 */
const ADMIT_SCRIPT = `
local lockedMs = 0
local max = tonumber(ARGV[2])
if max > 0 then
  local failures = tonumber(redis.call("GET", KEYS[1]) or "0")
  if failures >= max then
    local ttl = redis.call("PTTL", KEYS[1])
    if ttl > 0 then lockedMs = ttl end
  end
end
if ARGV[3] == "0" then return { 0, 0, lockedMs } end
local windowMs = tonumber(ARGV[1])
local ttl = redis.call("PTTL", KEYS[2])
if ttl <= 0 then
  redis.call("SET", KEYS[2], 1, "PX", windowMs)
  return { 1, windowMs, lockedMs }
end
return { redis.call("INCR", KEYS[2]), ttl, lockedMs }`;

/** Counts a failed authentication, in a fixed window from the first. */
const FAILURE_SCRIPT = `
local windowMs = tonumber(ARGV[1])
if redis.call("PTTL", KEYS[1]) <= 0 then
  redis.call("SET", KEYS[1], 1, "PX", windowMs)
else
  redis.call("INCR", KEYS[1])
end
return 1`;

type LimitRedis = Redis & {
  admitRequest(
    failures: string,
    counter: string,
    windowMs: number,
    max: number,
    count: 0 | 1,
  ): Promise<[number, number, number]>;
  recordAuthFailure(failures: string, windowMs: number): Promise<number>;
};

/**
 * The Redis store, failing open: while Redis is unreachable every call answers "not limited" at
 * once (or after the command timeout), and the outage is logged once, as is the recovery.
 * ioredis sends the scripts by hash and loads them again after a Redis restart.
 */
class RedisLimitStore implements LimitStore {
  private readonly redis: LimitRedis;
  private failing = false;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly windowMs: number,
    private readonly failureMax: number,
    private readonly logger: Logger,
  ) {
    redis.defineCommand('admitRequest', { numberOfKeys: 2, lua: ADMIT_SCRIPT });
    redis.defineCommand('recordAuthFailure', { numberOfKeys: 1, lua: FAILURE_SCRIPT });
    this.redis = redis as LimitRedis;
  }

  async admit(address: string, key: string | null): Promise<Admission> {
    const reply = await this.guard(() =>
      this.redis.admitRequest(
        `${this.prefix}:auth-failures:${address}`,
        `${this.prefix}:rate-limit:${key ?? ''}`,
        this.windowMs,
        this.failureMax,
        key === null ? 0 : 1,
      ),
    );
    if (!reply) return { lockedOutMs: 0 };
    const [hits, ttl, lockedOutMs] = reply.map(Number);
    return key === null ? { lockedOutMs } : { lockedOutMs, hits, resetMs: ttl };
  }

  async recordFailure(address: string): Promise<void> {
    await this.guard(() =>
      this.redis.recordAuthFailure(`${this.prefix}:auth-failures:${address}`, this.windowMs),
    );
  }

  private async guard<T>(command: () => Promise<T>): Promise<T | undefined> {
    try {
      if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
      const result = await command();
      if (this.failing) {
        this.failing = false;
        this.logger.log('Redis is back: rate limits are enforced again');
      }
      return result;
    } catch (err) {
      if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          `Redis is unavailable (${err instanceof Error ? err.message : String(err)}): requests are not rate-limited until it is back`,
        );
      }
      return undefined;
    }
  }
}

/** The in-process store (no `REDIS_URL`): two fixed-window counters of express-rate-limit. */
class MemoryLimitStore implements LimitStore {
  private readonly failures = new MemoryStore();
  private readonly hits = new MemoryStore();

  constructor(
    private readonly failureMax: number,
    windowMs: number,
  ) {
    this.failures.init({ windowMs } as Options);
    this.hits.init({ windowMs } as Options);
  }

  async admit(address: string, key: string | null): Promise<Admission> {
    let lockedOutMs = 0;
    if (this.failureMax > 0) {
      const failed = await this.failures.get(address);
      const resetMs = failed?.resetTime ? failed.resetTime.getTime() - Date.now() : 0;
      if (failed && failed.totalHits >= this.failureMax && resetMs > 0) lockedOutMs = resetMs;
    }
    if (key === null) return { lockedOutMs };
    const { totalHits, resetTime } = await this.hits.increment(key);
    return { lockedOutMs, hits: totalHits, resetMs: resetTime ? resetTime.getTime() - Date.now() : 0 };
  }

  async recordFailure(address: string): Promise<void> {
    await this.failures.increment(address);
  }
}

/** The policy name of the RateLimit headers (draft 8), as express-rate-limit names it: `1200-in-1min`. */
function policyName(limit: number, windowMs: number): string {
  const seconds = windowMs / 1e3;
  const minutes = seconds / 60;
  const hours = minutes / 60;
  const days = hours / 24;
  let duration: string;
  if (seconds < 60) duration = `${seconds}sec`;
  else if (minutes < 60) duration = `${minutes}min`;
  else if (hours < 24) duration = `${hours}hr${hours > 1 ? 's' : ''}`;
  else duration = `${days}day${days > 1 ? 's' : ''}`;
  return `${limit}-in-${duration}`;
}

const partitionKeys = new Map<string, string>();
/** The `pk` of RateLimit-Policy: 12 hex digits of the key's SHA-256, base64 (remembered per key). */
function partitionKey(key: string): string {
  let pk = partitionKeys.get(key);
  if (pk === undefined) {
    pk = Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
    if (partitionKeys.size >= 10_000) partitionKeys.clear();
    partitionKeys.set(key, pk);
  }
  return pk;
}

/**
 * Two limits, counted in Redis under `QUEUE_PREFIX` when `REDIS_URL` is set (so every replica
 * shares them), else in process memory, both checked in one step per request (one Redis round
 * trip):
 * - failed authentication per client address: once `AUTH_FAILURE_LIMIT_MAX` answers of 401 were
 *   sent to an address within the window, every request from it whose credential fails (a
 *   token, embed token or session id that is not valid, or none) gets 429 instead of 401 until
 *   the window passes, while a valid one goes on as usual: the request is authenticated first
 *   (a token is one SHA-256 and, unless the principal cache holds it, one lookup by a unique
 *   index), and only its failure is refused, so a stale client behind a shared address never
 *   locks out the others (see `auth-lockout.ts`);
 * - requests per token (per client address without one): `RATE_LIMIT_MAX` per window, with the
 *   `RateLimit` and `RateLimit-Policy` headers of the IETF draft 8 on every answer, and 429 with
 *   `Retry-After` past it.
 * The probes are never limited. When Redis is unavailable, requests go on unlimited (logged).
 */
export function configureRateLimits(app: NestExpressApplication, config: AppConfig): void {
  const { http } = config;
  if (http.authFailureLimitMax <= 0 && http.rateLimitMax <= 0) return;
  app.use(
    requestLimits({
      windowMs: http.rateLimitWindowSeconds * 1000,
      failureMax: http.authFailureLimitMax,
      limit: http.rateLimitMax,
      redis: app.get(RateLimitRedis).connection(),
      prefix: config.queue.prefix,
    }),
  );
}

/** The middleware of {@link configureRateLimits}; `redis` null counts in process memory. */
export function requestLimits(options: {
  windowMs: number;
  failureMax: number;
  limit: number;
  redis: Redis | null;
  prefix: string;
}) {
  const { windowMs, failureMax, limit, redis } = options;
  const store: LimitStore = redis
    ? new RedisLimitStore(redis, options.prefix, windowMs, failureMax, new Logger('RateLimit'))
    : new MemoryLimitStore(failureMax, windowMs);
  const name = policyName(limit, windowMs);
  const windowSeconds = Math.ceil(windowMs / 1000);

  return (req: Request, res: Response, next: NextFunction): void => {
    // Nor the read a conditional write makes of its resource: the write itself was counted.
    if (PROBES.test(req.path) || isInternalRead(req)) return next();
    const address = addressKey(req);
    const key = limit > 0 ? rateLimitKey(req) : null;
    store.admit(address, key).then((admission) => {
      // Locked out: a 401 of this request is answered 429 instead (sendError); a valid token goes on.
      if (admission.lockedOutMs > 0) markLockedOut(req, admission.lockedOutMs);
      else if (failureMax > 0) countFailures(req, res, () => store.recordFailure(address));
      if (admission.hits !== undefined && key !== null) {
        const resetSeconds = Math.max(0, Math.ceil((admission.resetMs ?? 0) / 1000));
        res.append('RateLimit', `"${name}"; r=${Math.max(limit - admission.hits, 0)}; t=${resetSeconds}`);
        res.append(
          'RateLimit-Policy',
          `"${name}"; q=${limit}; w=${windowSeconds}; pk=:${partitionKey(key)}:`,
        );
        if (admission.hits > limit) {
          res.setHeader('Retry-After', String(resetSeconds));
          tooManyRequests(req, res, 'Too many requests for this token');
          return;
        }
      }
      next();
    }, next);
  };
}

/** The 429 of the request limit; the caller has set Retry-After. */
function tooManyRequests(req: Request, res: Response, reason: string): void {
  sendError(req, res, errorBody(429, 'rate_limited', `${reason}; retry after the Retry-After delay`));
}

/**
 * Counts a 401 answer as a failed authentication of the address before it leaves, so a client
 * never sees its answer before it is counted. Only failures count: any number of requests with
 * a valid token never spend the budget. Nor does the Basic challenge to a request that sent no
 * credential: git sends each command's first request without one and answers the challenge with
 * the token, so counting it would lock out an address running many git commands (a CI, runtimes
 * behind one NAT), and such a request guesses nothing.
 */
function countFailures(req: Request, res: Response, record: () => Promise<void>): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (res.statusCode !== 401 || isBasicChallenge(req, res)) return end(...args);
    void record()
      .catch(() => undefined)
      .finally(() => end(...args));
    return res;
  }) as Response['end'];
}
