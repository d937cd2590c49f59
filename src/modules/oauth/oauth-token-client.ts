import { Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { readBoundedText } from '../../core/http/bounded-body.js';
import {
  NOTHING_ALLOWED,
  OutboundRefused,
  pinUrl,
  type OutboundAllowList,
} from '../../core/net/outbound-address.js';
import { requestPinned } from '../../core/net/pinned-request.js';

/** How long the token endpoint has to answer, body included. */
export const TOKEN_REQUEST_TIMEOUT_MS = 10_000;
/** The most of a token response that is read. */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** Lifetimes past this (ten years) are treated as not given. */
const MAX_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

export interface CodeExchange {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  code: string;
  redirectUri: string;
  codeVerifier: string;
}

/** A successful token response (RFC 6749 5.1), lifetimes in seconds. */
export interface TokenSet {
  accessToken: string;
  tokenType: string | null;
  refreshToken: string | null;
  scope: string | null;
  expiresIn: number | null;
  refreshTokenExpiresIn: number | null;
}

/**
 * The token endpoint refused the code or could not be used. `error` is the provider's RFC 6749
 * 5.2 code when it sent one, else one of ours; neither field ever carries a secret of ours.
 */
export class OAuthTokenExchangeError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

/** The outbound half of the authorization-code flow, behind an interface so it can be replaced. */
export abstract class OAuthTokenClient {
  /** The tokens, or an {@link OAuthTokenExchangeError}. */
  abstract exchangeCode(request: CodeExchange): Promise<TokenSet>;
}

/** RFC 6749 2.3.1: client id and secret are form-urlencoded before they are joined and base64ed. */
export function basicClientAuth(clientId: string, clientSecret: string): string {
  const form = (s: string) => new URLSearchParams([['', s]]).toString().slice(1);
  return `Basic ${Buffer.from(`${form(clientId)}:${form(clientSecret)}`, 'utf8').toString('base64')}`;
}

/**
 * {@link OAuthTokenClient} over HTTP(S): no redirects, a deadline, a bounded body, and only to an
 * address the outbound rule takes (core/net): the token endpoint is an address the account
 * chose, so it is resolved, checked and connected to as checked, and one in the platform's own
 * network (unless `OUTBOUND_ALLOWED_HOSTS` opens it) reads as unreachable, in the same words as a
 * refused connection.
 */
@Injectable()
export class FetchOAuthTokenClient extends OAuthTokenClient {
  private readonly logger = new Logger('OAuthTokenClient');
  timeoutMs = TOKEN_REQUEST_TIMEOUT_MS;
  maxResponseBytes = MAX_TOKEN_RESPONSE_BYTES;
  /** What the operator opened to the outbound rule (`OUTBOUND_ALLOWED_HOSTS`). */
  allow: OutboundAllowList;

  constructor(@Optional() config?: AppConfig) {
    super();
    this.allow = config?.outboundAllowList ?? NOTHING_ALLOWED;
  }

  async exchangeCode(request: CodeExchange): Promise<TokenSet> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let text: string;
    try {
      const pin = await pinUrl(request.tokenUrl, { allow: this.allow });
      const res = await requestPinned(request.tokenUrl, pin, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: basicClientAuth(request.clientId, request.clientSecret),
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: request.code,
          redirect_uri: request.redirectUri,
          code_verifier: request.codeVerifier,
        }).toString(),
        signal,
      });
      status = res.status;
      text = await this.readBody(res);
    } catch (err) {
      if (err instanceof OAuthTokenExchangeError) throw err;
      if (err instanceof OutboundRefused) {
        this.logger.debug({ reason: err.reason, detail: err.detail }, 'token endpoint refused');
      }
      if (signal.aborted) {
        throw new OAuthTokenExchangeError(
          'token_endpoint_timeout',
          `The token endpoint did not answer within ${this.timeoutMs / 1000} s`,
        );
      }
      throw new OAuthTokenExchangeError(
        'token_endpoint_unreachable',
        'The token endpoint could not be reached',
      );
    }
    const body = parseJsonObject(text);
    if (status < 200 || status > 299) {
      const error = typeof body?.error === 'string' ? clean(body.error, 100) : '';
      const description =
        typeof body?.error_description === 'string' ? clean(body.error_description, 500) : '';
      throw new OAuthTokenExchangeError(
        error || 'token_request_failed',
        description || `The token endpoint answered HTTP ${status}`,
      );
    }
    if (!body) {
      throw new OAuthTokenExchangeError(
        'invalid_token_response',
        'The token endpoint did not answer with a JSON object',
      );
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new OAuthTokenExchangeError('invalid_token_response', 'The token response has no access_token');
    }
    return {
      accessToken: body.access_token,
      tokenType: typeof body.token_type === 'string' ? body.token_type.slice(0, 64) : null,
      refreshToken:
        typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
      scope: typeof body.scope === 'string' ? body.scope.slice(0, 4096) : null,
      expiresIn: lifetime(body.expires_in),
      refreshTokenExpiresIn: lifetime(body.refresh_token_expires_in),
    };
  }

  /** The body as text, refusing (without reading on) anything past the size limit. */
  private readBody(res: Response): Promise<string> {
    return readBoundedText(
      res,
      this.maxResponseBytes,
      () =>
        new OAuthTokenExchangeError(
          'invalid_token_response',
          `The token response is larger than ${this.maxResponseBytes / 1024} KB`,
        ),
    );
  }
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A lifetime in whole seconds: a positive number (or numeric string, as some providers send). */
function lifetime(value: unknown): number | null {
  const n = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 && n <= MAX_LIFETIME_SECONDS
    ? Math.floor(n)
    : null;
}

/** Provider text kept for the record: no control characters, bounded. */
const clean = (s: string, max: number) =>
  s
    .replace(/\p{Cc}/gu, ' ')
    .trim()
    .slice(0, max);
