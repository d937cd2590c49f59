import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The signature of a webhook delivery, as Standard Webhooks (https://www.standardwebhooks.com)
 * and Stripe sign theirs: HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with
 * the endpoint's secret, sent base64 as `v1,<signature>` in `webhook-signature` (one per secret,
 * space-separated, while a rotated-out secret still signs). Pure: no framework, no clock.
 */

/** What every secret starts with; the rest is the key, base64. */
export const SECRET_PREFIX = 'whsec_';

/** Bytes of a new secret's key (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and 32 random bytes, base64. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The key of a secret (`whsec_<base64>`). */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a webhook secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** What a delivery signs: its id, the attempt's time (unix seconds) and the exact body. */
export interface SignedContent {
  id: string;
  timestamp: number;
  body: string;
}

/** `v1,<base64 HMAC-SHA256>` of `content` under one secret. */
export function signature(secret: string, content: SignedContent): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${content.id}.${content.timestamp}.${content.body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The three headers of a signed delivery: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature`, which holds one signature per secret, the current one first.
 */
export function signatureHeaders(secrets: readonly string[], content: SignedContent): Record<string, string> {
  if (secrets.length === 0) throw new Error('a delivery is signed with at least one secret');
  return {
    'webhook-id': content.id,
    'webhook-timestamp': String(content.timestamp),
    'webhook-signature': secrets.map((s) => signature(s, content)).join(' '),
  };
}

/**
 * Whether `header` (a `webhook-signature` value) holds a valid `v1` signature of `content` under
 * `secret`, compared in constant time. What a receiver does (the tests' receiver uses the
 * `standardwebhooks` package instead, an independent implementation).
 */
export function verifySignature(secret: string, content: SignedContent, header: string): boolean {
  const expected = Buffer.from(signature(secret, content).slice(3), 'base64');
  return header
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .some((part) => {
      const given = Buffer.from(part.slice(3), 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
