import http from 'node:http';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { AppConfig } from '../../config/app-config.js';
import { errorBody, sendError, toErrorBody, type ErrorBody } from '../../errors/exception.filter.js';
import { isErrorCode } from '../../errors/error-codes.js';
import { behaviourOf } from '../route-behaviour.js';
import { conditionalError } from './conditional.errors.js';
import { CONDITIONAL_WRITES, ConditionalRoutes } from './conditional-routes.js';
import { currentRepresentationReader, type Representation } from './current-representation.js';
import {
  ifMatchHolds,
  ifNoneMatchHolds,
  parseEntityTag,
  parseTagCondition,
  type TagCondition,
} from './entity-tags.js';
import {
  AdvisoryResourceLocks,
  InProcessResourceLocks,
  type HeldLock,
  type ResourceLocks,
} from './resource-locks.js';

/** Longest wait for another conditional write of the same resource to answer, ms. */
export const LOCK_WAIT_MS = 10_000;
/** Conditional writes that may hold (or wait for) a resource lock at once, per API process. */
export const LOCK_CONNECTIONS = 8;
/** How long a lock outlives a write whose client went away before it was answered, ms. */
const ABANDONED_HOLD_MS = 30_000;

/**
 * What conditional writes need from the application: its routes (read once, on first use) and
 * the resource locks, PostgreSQL advisory locks on a small pool of their own (in-process locks on
 * the embedded database), closed at shutdown.
 */
@Injectable()
export class ConditionalRequests implements OnApplicationShutdown {
  readonly locks: ResourceLocks;
  private table: ConditionalRoutes | null = null;

  constructor(
    private readonly modules: ModulesContainer,
    dataSource: DataSource,
    config: AppConfig,
  ) {
    this.locks = config.embedded
      ? new InProcessResourceLocks()
      : new AdvisoryResourceLocks(
          () => (dataSource.driver as PostgresDriver).master as pg.Pool,
          LOCK_CONNECTIONS,
          `platform-api:${config.role}:conditional-writes`,
        );
  }

  get routes(): ConditionalRoutes {
    return (this.table ??= new ConditionalRoutes(this.modules));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.locks.close();
  }
}

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

interface Conditions {
  ifMatch?: TagCondition;
  ifNoneMatch?: TagCondition;
}

export interface ConditionalWriteOptions {
  routes: ConditionalRoutes;
  locks: ResourceLocks;
  read: (req: Request, path: string) => Promise<Representation>;
  waitMs: number;
}

/**
 * Strong ETags on every answer Express sends whole (`res.send`, `res.json`), where it answered
 * weak ones: `If-Match` compares strongly (RFC 9110, section 13.1.1), and a weak tag never matches
 * it. Express already answers `304` to a GET whose `If-None-Match` names the current tag. Then the
 * middleware of {@link conditionalWrites}, after the body parser and the input checks.
 */
export function configureConditionalRequests(app: NestExpressApplication): void {
  const express = app.getHttpAdapter().getInstance();
  express.set('etag', 'strong');
  const { routes, locks } = app.get(ConditionalRequests);
  app.use(
    conditionalWrites({ routes, locks, read: currentRepresentationReader(express), waitMs: LOCK_WAIT_MS }),
  );
}

/**
 * `If-Match` and `If-None-Match` on PUT, PATCH and DELETE (RFC 9110, section 13). A write that
 * sends neither passes at once, without a lock. Routes with an error shape of their own (SCIM)
 * keep their own rules. Otherwise, on a route with a GET of the same path (see
 * `ConditionalRoutes`):
 * 1. malformed headers: `400 invalid_precondition`;
 * 2. the resource's lock is taken (one conditional write of a resource at a time, every API
 *    process), waited for at most `waitMs`, else `409 resource_busy` with `Retry-After`;
 * 3. the current representation is read with a GET as the caller (see
 *    `current-representation.ts`), and the conditions evaluated against its ETag: false answers
 *    `412 precondition_failed` with the current `ETag`, nothing changed;
 * 4. true: the handler runs holding the lock, released once it has answered.
 * When the read is refused (401, 403, 404...), the precondition cannot be evaluated and its answer
 * is the write's, nothing changed; except a 404 with `If-None-Match` alone: no representation,
 * so the condition holds and the handler answers (it may create the resource).
 * On a route with no GET of the same path: `400 precondition_unsupported` (ignoring the header
 * would lose the change of the client that relies on it).
 */
export function conditionalWrites(options: ConditionalWriteOptions): Middleware {
  const logger = new Logger('ConditionalRequests');
  return (req, res, next) => {
    if (!CONDITIONAL_WRITES.has(req.method) || behaviourOf(req).renderError) return next();
    withholdBodyTags(res);
    const ifMatch = req.headers['if-match'];
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifMatch === undefined && ifNoneMatch === undefined) return next();
    const target = options.routes.target(req.method, req.path);
    // No such route: Nest answers 404.
    if (!target) return next();
    if (!target.read) {
      const message = `${req.method} ${target.write.declared} takes no If-Match or If-None-Match: it has no GET of the same path to compare with; send the request without them`;
      return refuse(req, res, conditionalError('precondition_unsupported', message));
    }
    const conditions: Conditions = {};
    for (const [name, value, key] of [
      ['If-Match', ifMatch, 'ifMatch'],
      ['If-None-Match', ifNoneMatch, 'ifNoneMatch'],
    ] as const) {
      if (value === undefined) continue;
      const parsed = parseTagCondition(value);
      if (parsed === null) {
        const message = `${name} must be * or a list of entity tags in double quotes ("..." or W/"...")`;
        return refuse(req, res, conditionalError('invalid_precondition', message));
      }
      conditions[key] = parsed;
    }
    evaluate(req, res, next, conditions, options).catch((err: unknown) => {
      logger.error({ err, reqId: req.id }, 'could not evaluate a precondition');
      if (!res.headersSent) sendError(req, res, toErrorBody(err));
    });
  };
}

async function evaluate(
  req: Request,
  res: Response,
  next: NextFunction,
  conditions: Conditions,
  options: ConditionalWriteOptions,
): Promise<void> {
  const lock = await options.locks.acquire(resourceKey(req.path), options.waitMs);
  if (!lock) {
    res.setHeader('Retry-After', '1');
    const message = `Another conditional write of this resource did not answer within ${options.waitMs / 1000} s; nothing was changed; retry after Retry-After`;
    return refuse(req, res, conditionalError('resource_busy', message));
  }
  holdUntilAnswered(req, res, lock);
  const current = await options.read(req, req.path);
  if (current.status >= 200 && current.status < 300) {
    const raw = current.headers.etag;
    const tag = parseEntityTag(typeof raw === 'string' ? raw : undefined);
    if (conditions.ifMatch && !ifMatchHolds(conditions.ifMatch, tag))
      return preconditionFailed(req, res, raw, 'its current ETag does not match If-Match');
    if (conditions.ifNoneMatch && !ifNoneMatchHolds(conditions.ifNoneMatch, tag))
      return preconditionFailed(
        req,
        res,
        raw,
        conditions.ifNoneMatch === '*'
          ? 'it exists (If-None-Match: *)'
          : 'its current ETag matches If-None-Match',
      );
    return next();
  }
  if (current.status === 404 && !conditions.ifMatch) return next();
  answerAsRead(req, res, current);
}

function refuse(req: Request, res: Response, error: Error): void {
  sendError(req, res, toErrorBody(error));
}

/** The ETag header of an answer, set past {@link withholdBodyTags}. */
const setTag = (res: Response, etag: string) =>
  http.ServerResponse.prototype.setHeader.call(res, 'ETag', etag);

/**
 * Keeps Express from tagging the answer of a write with the hash of its body: that body is not
 * always the resource as a GET shows it (RFC 9110, section 9.3.4, forbids such a validator on an
 * answer to PUT), so a client must read the resource again for its new tag. A 412 still carries
 * the current tag ({@link setTag}).
 */
function withholdBodyTags(res: Response): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: number | string | readonly string[]) =>
    name.toLowerCase() === 'etag' ? res : setHeader(name, value)) as Response['setHeader'];
}

function preconditionFailed(req: Request, res: Response, etag: unknown, why: string): void {
  if (typeof etag === 'string') setTag(res, etag);
  const message = `The resource changed: ${why}; nothing was changed. Read it again (GET) for its current ETag`;
  refuse(req, res, conditionalError('precondition_failed', message));
}

/** The refusal of the read, as the write's answer (in the route's error shape, with its Retry-After). */
function answerAsRead(req: Request, res: Response, current: Representation): void {
  let body: ErrorBody | null = null;
  try {
    const parsed = JSON.parse(current.body.toString('utf8')) as Partial<ErrorBody>;
    if (typeof parsed.code === 'string' && isErrorCode(parsed.code) && parsed.message !== undefined)
      body = errorBody(current.status, parsed.code, parsed.message);
  } catch {
    // Not the one error shape: answered below.
  }
  body ??= errorBody(
    current.status >= 400 ? current.status : 500,
    current.status >= 500 || current.status < 400 ? 'internal_error' : 'bad_request',
    'The current state of the resource could not be read to evaluate the precondition',
  );
  const retryAfter = current.headers['retry-after'];
  if (typeof retryAfter === 'string') res.setHeader('Retry-After', retryAfter);
  sendError(req, res, body);
}

/**
 * Keeps the lock until the write has answered (its unit of work committed before the answer), or,
 * when the client goes away first, until it answers anyway or {@link ABANDONED_HOLD_MS} passed.
 */
function holdUntilAnswered(req: Request, res: Response, lock: HeldLock): void {
  let timer: NodeJS.Timeout | undefined;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    void lock.release();
  };
  const abandoned = () => {
    if (res.writableEnded) return release();
    timer ??= setTimeout(release, ABANDONED_HOLD_MS);
    timer.unref();
  };
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const result = end(...args);
    release();
    return result;
  }) as Response['end'];
  res.once('finish', release);
  res.once('close', abandoned);
  if (req.socket?.destroyed) abandoned();
}

/**
 * The key of a resource's lock: its path, segments decoded and in lower case (Express matches
 * routes case-insensitively), without empty segments, so every spelling of one path is one key.
 */
export function resourceKey(path: string): string {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s).toLowerCase();
      } catch {
        return s.toLowerCase();
      }
    })
    .join('/');
}
