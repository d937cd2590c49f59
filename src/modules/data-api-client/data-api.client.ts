import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { ApiError } from '../../core/errors/api-error.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { DataApiAddresses } from './data-api-addresses.service.js';
import { API_SECRET_VARIABLE, DataApiKeys, signDataApiToken } from './data-api-keys.service.js';
import { dataApiError } from './data-api.errors.js';
import {
  AnswerTooLarge,
  errorOfText,
  isContinueWait,
  readCapped,
  readLoad,
  readMeta,
  readSql,
  UnreadableAnswer,
  type LoadResult,
  type Reading,
  type SqlResult,
} from './data-api.wire.js';

export type { LoadResult, SqlResult } from './data-api.wire.js';

/** The deployment whose data is queried, in the caller's account. */
export interface DataApiTarget {
  accountId: number;
  deploymentId: number;
}

/**
 * Who the query runs as: the claims of the API token, which the data API hands to the data
 * model as its security context (row-level rules, multi-tenancy). `iat` and `exp` are set here.
 */
export type SecurityContext = Record<string, unknown>;

export interface DataApiCallOptions {
  /** Aborts the call (the request under way and any wait); the call rejects with its reason. */
  signal?: AbortSignal;
  /** How long to keep repeating a query answered `Continue wait`, ms; default `DATA_API_WAIT_MS`. */
  waitMs?: number;
  /** Longest one request may take, answer included, ms; default `DATA_API_TIMEOUT_MS`. */
  timeoutMs?: number;
}

/** First pause after a `Continue wait`, doubled after each, up to {@link MAX_DELAY_MS}. */
export const FIRST_DELAY_MS = 100;
export const MAX_DELAY_MS = 2_000;

/** The message of a call on an installation that names no data API (no setting to retry with). */
export const NO_DATA_API =
  'No data API is configured on this installation: the operator sets DATA_API_URL_TEMPLATE to where ' +
  "deployments' data APIs answer (e.g. https://{deploymentId}.data.example.com), or DEPLOYMENT_DOMAIN " +
  'when each deployment serves its own at https://deployment-<id>.<DEPLOYMENT_DOMAIN>';

/** System errors of a host name that does not resolve: a setting to fix, not a moment to wait. */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_NODATA']);

/** Longest message of the data API carried into an error of ours. */
const MESSAGE_MAX = 500;

interface Endpoint {
  baseUrl: string;
  /** The setting the address comes from, for messages: `DATA_API_URL_TEMPLATE` or `DEPLOYMENT_DOMAIN`. */
  setting: string;
  /** The deployment's `CUBEJS_API_SECRET`. */
  secret: string;
  /** Text never to be repeated: the secret (and, once signed, each token). */
  secrets: string[];
}

interface Call {
  method: 'GET' | 'POST';
  /** After `/cubejs-api/v1/`. */
  path: 'load' | 'cubesql' | 'meta';
  body?: unknown;
}

/**
 * Queries a deployment's Core Data API (Cube's REST API): JSON queries (`load`), SQL (`sql`) and
 * the model's metadata (`meta`), as a caller with the given security context.
 *
 * - Where: `DATA_API_URL_TEMPLATE` with the deployment's ids filled in, else, when
 *   `DEPLOYMENT_DOMAIN` is set, the deployment's own `deploymentUrl` (the address its production
 *   environment is served at). With neither, no data API is configured on this installation: the
 *   call fails at once with `data_api_not_configured` naming both settings, and nothing is sent.
 * - As whom: an API token, a JWT (HS256) signed with the deployment's `CUBEJS_API_SECRET`
 *   environment variable whose claims are the security context, sent in `Authorization` with no
 *   prefix. A fresh token is signed for each request.
 * - Waiting: a query answered `Continue wait` is repeated, after 100 ms and then twice as long each
 *   time (at most 2 s), until data arrives; past `DATA_API_WAIT_MS` the call fails with
 *   `data_api_timeout`. Each request, answer included, is bounded by `DATA_API_TIMEOUT_MS` and
 *   each answer by `DATA_API_MAX_BYTES`. Redirects are not followed.
 *
 * Neither the secret nor a token is ever part of an error message or a log line: text the data
 * API sends back is cut to 500 characters and has them blanked out.
 */
@Injectable()
export class DataApiClient {
  private readonly logger = new Logger(DataApiClient.name);

  constructor(
    private readonly config: AppConfig,
    private readonly deployments: DeploymentsService,
    private readonly keys: DataApiKeys,
    private readonly addresses: DataApiAddresses,
  ) {}

  /**
   * Whether this installation names deployments' data APIs (DATA_API_URL_TEMPLATE or
   * DEPLOYMENT_DOMAIN, else a runtime that runs deployments).
   */
  get configured(): boolean {
    return (
      this.config.dataApi.urlTemplate !== null ||
      this.config.dataApi.deploymentUrls ||
      this.addresses.registered !== null
    );
  }

  /**
   * Throws 409 `data_api_not_configured`, naming the settings, when this installation names no
   * data API: for callers with costly work to do before their first query.
   */
  requireConfigured(): void {
    if (!this.configured) throw dataApiError('data_api_not_configured', NO_DATA_API);
  }

  /** `POST /v1/load`: a JSON query; its rows as objects keyed by member name. */
  load(
    target: DataApiTarget,
    query: Record<string, unknown>,
    securityContext: SecurityContext,
    options: DataApiCallOptions = {},
  ): Promise<LoadResult> {
    return this.call(
      target,
      { method: 'POST', path: 'load', body: { query } },
      readLoad,
      securityContext,
      options,
    );
  }

  /** `POST /v1/cubesql`: a SQL query; its columns in order and its rows keyed by column name. */
  sql(
    target: DataApiTarget,
    sql: string,
    securityContext: SecurityContext,
    options: DataApiCallOptions = {},
  ): Promise<SqlResult> {
    return this.call(
      target,
      { method: 'POST', path: 'cubesql', body: { query: sql } },
      readSql,
      securityContext,
      options,
    );
  }

  /** `GET /v1/meta`: the cubes and views of the data model the security context may see. */
  meta(
    target: DataApiTarget,
    securityContext: SecurityContext,
    options: DataApiCallOptions = {},
  ): Promise<unknown> {
    return this.call(target, { method: 'GET', path: 'meta' }, readMeta, securityContext, options);
  }

  private async call<T>(
    target: DataApiTarget,
    request: Call,
    read: (text: string) => Reading<T>,
    securityContext: SecurityContext,
    options: DataApiCallOptions,
  ): Promise<T> {
    const waitMs = options.waitMs ?? this.config.dataApi.waitMs;
    const timeoutMs = options.timeoutMs ?? this.config.dataApi.timeoutMs;
    const endpoint = await this.endpoint(target);
    const deadline = Date.now() + waitMs;
    let delay = FIRST_DELAY_MS;
    for (let attempt = 1; ; attempt += 1) {
      options.signal?.throwIfAborted();
      const reading = await this.attempt(
        target,
        endpoint,
        request,
        read,
        securityContext,
        timeoutMs,
        options,
      );
      if (reading.kind === 'data') return reading.value;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.logger.warn(
          { deploymentId: target.deploymentId, path: request.path, attempts: attempt, waitMs },
          'The data API was still computing the query when the wait bound ran out',
        );
        throw dataApiError(
          'data_api_timeout',
          `The data API of deployment ${target.deploymentId} was still computing the query after ${waitMs} ms ` +
            `(${attempt} answers "Continue wait"); retry later`,
        );
      }
      await this.pause(Math.min(delay, remaining), options.signal);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }

  /** One request: its data, or `Continue wait`; anything else is one of our errors. */
  private async attempt<T>(
    target: DataApiTarget,
    endpoint: Endpoint,
    request: Call,
    read: (text: string) => Reading<T>,
    securityContext: SecurityContext,
    timeoutMs: number,
    options: DataApiCallOptions,
  ): Promise<Exclude<Reading<T>, { kind: 'error' }>> {
    const token = await this.sign(endpoint, securityContext, timeoutMs);
    const secrets = [...endpoint.secrets, token];
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const where = { deploymentId: target.deploymentId, path: request.path };
    let status: number;
    let text: string;
    try {
      const response = await fetch(`${endpoint.baseUrl}/cubejs-api/v1/${request.path}`, {
        method: request.method,
        headers: {
          Authorization: token,
          Accept: 'application/json',
          ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: 'manual',
        signal,
      });
      status = response.status;
      text = await readCapped(response, this.config.dataApi.maxBytes);
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (deadline.aborted) {
        this.logger.warn({ ...where, timeoutMs }, 'The data API did not answer in time');
        throw dataApiError(
          'data_api_unavailable',
          `The data API of deployment ${target.deploymentId} did not answer within ${timeoutMs} ms; retry shortly`,
        );
      }
      if (err instanceof AnswerTooLarge) {
        this.logger.warn(
          { ...where, maxBytes: this.config.dataApi.maxBytes },
          'The data API answer is too large',
        );
        throw dataApiError(
          'data_api_failed',
          `The data API of deployment ${target.deploymentId} answered more than ${this.config.dataApi.maxBytes} bytes ` +
            '(DATA_API_MAX_BYTES); ask for fewer rows',
        );
      }
      const reason = networkReason(err);
      this.logger.warn({ ...where, reason, setting: endpoint.setting }, 'The data API could not be reached');
      throw dataApiError(
        'data_api_unavailable',
        `The data API of deployment ${target.deploymentId} could not be reached (${reason}${
          UNRESOLVED.has(reason)
            ? `: its host name does not resolve); check ${endpoint.setting}`
            : `); retry shortly, and check ${endpoint.setting} if it persists`
        }`,
      );
    }
    if (status >= 200 && status < 300) {
      let reading: Reading<T>;
      try {
        reading = read(text);
      } catch (err) {
        if (!(err instanceof UnreadableAnswer)) throw err;
        this.logger.warn({ ...where, status, problem: err.message }, 'The data API answer is unreadable');
        throw dataApiError(
          'data_api_failed',
          `The data API of deployment ${target.deploymentId} answered ${err.message}`,
        );
      }
      if (reading.kind !== 'error') return reading;
      this.logger.warn({ ...where, status }, 'The data API refused the query');
      throw dataApiError(
        'data_api_query_invalid',
        `The data API of deployment ${target.deploymentId} refused the query: ${this.quote(reading.message, secrets)}`,
      );
    }
    const message = errorOfText(text);
    if (isContinueWait(message)) return { kind: 'continue-wait' };
    this.logger.warn({ ...where, status }, 'The data API answered an error');
    throw this.failure(target, endpoint, status, message === null ? null : this.quote(message, secrets));
  }

  private failure(
    target: DataApiTarget,
    endpoint: Endpoint,
    status: number,
    message: string | null,
  ): ApiError {
    const of = `The data API of deployment ${target.deploymentId}`;
    const saying = message === null ? '' : `: ${message}`;
    if (status === 401 || status === 403) {
      return dataApiError(
        'data_api_failed',
        `${of} refused this service's API token (${status}${saying}); check the deployment's ${API_SECRET_VARIABLE}`,
      );
    }
    if (status === 404) {
      return dataApiError('data_api_failed', `${of} has no such endpoint (404); check ${endpoint.setting}`);
    }
    if (status === 429 || status === 502 || status === 503 || status === 504) {
      return dataApiError(
        'data_api_unavailable',
        `${of} is overloaded or unavailable (${status}); retry shortly`,
      );
    }
    if (status >= 400 && status < 500) {
      return dataApiError(
        'data_api_query_invalid',
        `${of} refused the query${message === null ? ` (${status})` : `: ${message}`}`,
      );
    }
    if (status >= 300 && status < 400) {
      return dataApiError('data_api_failed', `${of} answered a redirect (${status}), which is not followed`);
    }
    return dataApiError('data_api_failed', `${of} failed (${status}${saying})`);
  }

  /**
   * Where the deployment's data API is and the key its tokens are signed with; 404 for a deployment
   * not in the account, then 409 `data_api_not_configured` when the installation names no data API
   * (neither DATA_API_URL_TEMPLATE nor DEPLOYMENT_DOMAIN) or the deployment has no secret.
   */
  private async endpoint(target: DataApiTarget): Promise<Endpoint> {
    const { accountId, deploymentId } = target;
    const { urlTemplate: template, deploymentUrls } = this.config.dataApi;
    let baseUrl: string;
    let setting: string;
    if (template) {
      await this.deployments.requireInAccount(accountId, deploymentId);
      baseUrl = template
        .replaceAll('{deploymentId}', String(deploymentId))
        .replaceAll('{accountId}', String(accountId));
      setting = 'DATA_API_URL_TEMPLATE';
    } else if (deploymentUrls) {
      baseUrl = (await this.deployments.describe(accountId, deploymentId)).deploymentUrl.replace(/\/+$/, '');
      setting = 'DEPLOYMENT_DOMAIN';
    } else if (this.addresses.registered) {
      await this.deployments.requireInAccount(accountId, deploymentId);
      baseUrl = this.addresses.registered.baseUrl(deploymentId);
      setting = this.addresses.registered.setting;
    } else {
      await this.deployments.requireInAccount(accountId, deploymentId);
      throw dataApiError('data_api_not_configured', NO_DATA_API);
    }
    const secret = await this.keys.apiSecret(accountId, deploymentId);
    return { baseUrl, setting, secret, secrets: [secret] };
  }

  /** An API token for one request: the security context, issued now, valid a little past the request. */
  private sign(endpoint: Endpoint, securityContext: SecurityContext, timeoutMs: number): Promise<string> {
    const issuedAt = Math.floor(Date.now() / 1000);
    return signDataApiToken(
      endpoint.secret,
      securityContext,
      issuedAt,
      issuedAt + Math.ceil(timeoutMs / 1000) + 60,
    );
  }

  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(ms, undefined, { signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    }
  }

  /** Text of the data API for a message of ours: one line, cut short, with no secret in it. */
  private quote(text: string, secrets: readonly string[]): string {
    let out = text;
    for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('[redacted]');
    out = out.replace(/\s+/g, ' ').trim();
    return out.length > MESSAGE_MAX ? `${out.slice(0, MESSAGE_MAX)}…` : out;
  }
}

/** Why a request never got an answer: the system error code (`ECONNREFUSED`), else a phrase. */
function networkReason(err: unknown): string {
  let cause: unknown = err;
  for (let depth = 0; depth < 4 && cause; depth += 1) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return 'network error';
}
