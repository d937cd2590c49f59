import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { EmbedPrincipal } from '../../auth/embed-principal.js';
import type { Principal } from '../../auth/principal.js';
import { idempotencyError } from './idempotency.errors.js';

/** The request header naming a retry (IETF draft-ietf-httpapi-idempotency-key-header, as Stripe uses it). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header marking an answer as the replay of the first request's. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_KEY_LENGTH = 255;

/** 1 to 255 printable ASCII characters (space to `~`). */
const KEY = /^[\x20-\x7e]{1,255}$/;
/** The draft's form, a Structured Field string: `"..."` with `\"` and `\\` escapes. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The key of an `Idempotency-Key` header. A bare value is the key (as Stripe's clients send it);
 * a Structured Field string (`"..."`, the IETF draft's form) is unquoted, so both forms of a key
 * name the same key. 400 `invalid_idempotency_key` for anything else: empty, longer than 255
 * characters, or a character outside printable ASCII (the header sent twice is one value joined
 * by a comma, a key like any other).
 */
export function parseIdempotencyKey(raw: string | string[]): string {
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  const quoted = value.startsWith('"') ? SF_STRING.exec(value) : null;
  if (value.startsWith('"') && !quoted) throw invalid();
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : value;
  if (!KEY.test(key)) throw invalid();
  return key;
}

const invalid = () =>
  idempotencyError(
    'invalid_idempotency_key',
    `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`,
  );

/** Who sent a request, as the access guard left it on the request. */
export interface IdempotentCaller {
  accountId: number;
  /** The caller within the account: the same key from another caller is another request. */
  identity: string;
}

type GuardedRequest = Request & { principal?: Principal; embedPrincipal?: EmbedPrincipal };

/**
 * The caller of a request the guard authenticated: a Platform API token (its user and key) or an
 * embed token (its embed user, in the embed user's account). Null for a public route.
 */
export function callerOf(req: Request): IdempotentCaller | null {
  const { principal, embedPrincipal } = req as GuardedRequest;
  if (principal)
    return { accountId: principal.accountId, identity: `user:${principal.userId}:key:${principal.apiKeyId}` };
  if (embedPrincipal)
    return { accountId: embedPrincipal.accountId, identity: `embed-user:${embedPrincipal.embedUserId}` };
  return null;
}

/**
 * JSON with every object's keys in code-point order, at any depth: two bodies that differ only in
 * the order of their keys (or in white space) read the same. No body counts as `{}`, as it does
 * everywhere else.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value === undefined ? {} : value));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  // No prototype: a key named `__proto__` stays a key.
  const out = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(object).sort()) out[key] = sorted(object[key]);
  return out;
}

/** What makes two requests under one key "the same request". */
export interface FingerprintInput {
  method: string;
  /** The path with its query, as requested. */
  url: string;
  caller: IdempotentCaller;
  /** The parsed JSON body; ignored for `multipart`. */
  body: unknown;
  /** A `multipart/form-data` body is streamed to its handler, never parsed here: not part of the print. */
  multipart: boolean;
}

/** SHA-256 (hex) over the method, the path with its query, the caller and the canonical JSON body. */
export function requestFingerprint(input: FingerprintInput): string {
  const body = input.multipart ? 'multipart' : canonicalJson(input.body);
  return createHash('sha256')
    .update(JSON.stringify([input.method.toUpperCase(), input.url, input.caller.identity, body]))
    .digest('hex');
}
