import {
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { finalize, of, type Observable } from 'rxjs';
import { behaviourOf } from '../route-behaviour.js';
import { IdempotencyPrune } from './idempotency-prune.job.js';
import {
  callerOf,
  IDEMPOTENCY_KEY_HEADER,
  type IdempotentCaller,
  parseIdempotencyKey,
  REPLAYED_HEADER,
  requestFingerprint,
} from './idempotency-request.js';
import { idempotencyError } from './idempotency.errors.js';
import { IdempotencyRepository, type HeldKey, type StoredAnswer } from './idempotency.repository.js';

/** How long a key and its answer are kept. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/** How long a claim holds without being renewed: a dead process blocks its key this long at most. */
export const IDEMPOTENCY_LEASE_MS = 30_000;
/** How often a running request renews its claim. */
const RENEW_EVERY_MS = 10_000;
/** The headers an answer is replayed with (with its status and body). */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'] as const;

type EndArgs = Parameters<Response['end']>;

/**
 * `Idempotency-Key` on POST (IETF draft-ietf-httpapi-idempotency-key-header; Stripe's semantics).
 * `@Audited()` puts it on every mutating handler, outermost, before the audit interceptor, so a
 * replay runs nothing else and is not recorded as a second create. It acts only on a POST that
 * carries the header, from an authenticated caller (public routes ignore it), on a route whose
 * body is parsed (git's streamed requests ignore it).
 *
 * The first request under a key claims it (`in_progress`), runs, and keeps its answer (status,
 * Content-Type, Location, ETag, body) for 24 hours before the bytes go out, so a client that got
 * the answer and retries finds it. A repeat of the same request gets that answer again, marked
 * `Idempotent-Replayed: true`, without acting; another request under the key gets 422
 * `idempotency_key_reused`; a repeat while the first still runs gets 409
 * `idempotency_key_in_progress` with `Retry-After: 1`. Answers that ask for a retry (5xx, 429, or
 * any with `Retry-After`) are not kept: the claim is given up and the retry acts again.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly prune: IdempotencyPrune,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> | Promise<Observable<unknown>> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<Request>();
    const raw = req.headers['idempotency-key'];
    // Everything else (other methods, POSTs without the header) passes at once, without a promise.
    if (req.method !== 'POST' || raw === undefined) return next.handle();
    const behaviour = behaviourOf(req);
    if (behaviour.streamedBody) return next.handle();
    const caller = callerOf(req);
    if (!caller) return next.handle();
    return this.once(ctx, next, req, raw, caller, behaviour.multipart);
  }

  /** The request under its key: acts once, or answers what the key holds. */
  private async once(
    ctx: ExecutionContext,
    next: CallHandler,
    req: Request,
    raw: string | string[],
    caller: IdempotentCaller,
    multipart: boolean,
  ): Promise<Observable<unknown>> {
    const key = parseIdempotencyKey(raw);
    const fingerprint = requestFingerprint({
      method: req.method,
      url: req.originalUrl,
      caller,
      body: req.body as unknown,
      multipart,
    });
    await this.prune.ensureScheduled();
    const outcome = await this.keys.claim(caller.accountId, key, fingerprint, {
      ttlMs: IDEMPOTENCY_TTL_MS,
      leaseMs: IDEMPOTENCY_LEASE_MS,
    });
    const res = ctx.switchToHttp().getResponse<Response>();
    switch (outcome.kind) {
      case 'reused':
        throw idempotencyError(
          'idempotency_key_reused',
          `This ${IDEMPOTENCY_KEY_HEADER} was used for another request (another method, path, caller or body); use a new key`,
        );
      case 'in_progress':
        throw idempotencyError(
          'idempotency_key_in_progress',
          `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry after Retry-After to get its answer`,
          { retryAfterSeconds: 1 },
        );
      case 'replay':
        replay(res, outcome.answer);
        // Nest replies with what this emits: the answer has gone out already (see `replay`).
        return of(null);
      case 'claimed': {
        const held: HeldKey = { accountId: caller.accountId, key, claim: outcome.claim };
        const lease = this.keepLeased(held, req);
        this.keepAnswer(req, res, held, lease);
        let handlerDone = false;
        // A client that went away before the answer: once the handler is done, nothing may come to
        // keep, so the lease stops and runs out (as if this process had died).
        res.once('close', () => {
          if (handlerDone) lease.stop();
        });
        return next.handle().pipe(
          finalize(() => {
            handlerDone = true;
            if (res.destroyed) lease.stop();
          }),
        );
      }
    }
  }

  /** Renews the claim while the request runs, so no other request takes it over. */
  private keepLeased(held: HeldKey, req: Request): { stop(): void } {
    const timer = setInterval(() => {
      this.keys.renew(held, IDEMPOTENCY_LEASE_MS).then(
        (still) => {
          if (!still) clearInterval(timer);
        },
        (err: unknown) => this.logger.warn({ err, reqId: req.id }, 'could not renew an idempotency claim'),
      );
    }, RENEW_EVERY_MS);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /**
   * Takes the answer where every path ends, the handler's result or the exception filter's error:
   * `res.end` of this response. The answer is kept (or the claim given up) first; then it is sent.
   * Whatever happens to the store, the answer is sent.
   */
  private keepAnswer(req: Request, res: Response, held: HeldKey, lease: { stop(): void }): void {
    const end = res.end;
    res.end = ((...args: EndArgs) => {
      res.end = end;
      lease.stop();
      const send = () => void end.apply(res, args);
      void this.settle(req, res, held, args).then(send, send);
      return res;
    }) as Response['end'];
  }

  private async settle(req: Request, res: Response, held: HeldKey, args: EndArgs): Promise<void> {
    try {
      if (res.headersSent) {
        // Written in parts before its end (none of the routes it applies to does this): not kept.
        this.logger.warn(
          { reqId: req.id },
          'an answer streamed in parts is not kept for its Idempotency-Key',
        );
        await this.keys.release(held);
        return;
      }
      const status = res.statusCode;
      if (status >= 500 || status === 429 || res.getHeader('retry-after') !== undefined) {
        await this.keys.release(held);
        return;
      }
      const kept = await this.keys.complete(held, { status, headers: headersOf(res), body: bodyOf(args) });
      if (!kept)
        this.logger.warn({ reqId: req.id }, 'an idempotency claim was taken over before its answer was kept');
    } catch (err) {
      // The request has acted: its answer goes out all the same. Until the claim's lease runs out a
      // repeat gets 409, after it the repeat acts again.
      this.logger.error({ err, reqId: req.id }, 'could not keep the answer of an Idempotency-Key');
    }
  }
}

function headersOf(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

/** The body `res.end` was given, as text; null when it was given none. */
function bodyOf(args: EndArgs): string | null {
  const [chunk, encoding] = args as unknown[];
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return null;
  if (typeof chunk === 'string')
    return typeof encoding === 'string' && !/^utf-?8$/i.test(encoding)
      ? Buffer.from(chunk, encoding as BufferEncoding).toString('utf8')
      : chunk;
  if (chunk instanceof Uint8Array)
    return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
  return null;
}

/**
 * Sends a kept answer again. Nest then replies with what the interceptor emitted; the answer is
 * out, so what it calls on this response does nothing.
 */
function replay(res: Response, answer: StoredAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader(REPLAYED_HEADER, 'true');
  if (answer.body === null) res.end();
  else res.send(answer.body);
  const done = () => res;
  Object.assign(res, { status: done, send: done, json: done, end: done });
}
