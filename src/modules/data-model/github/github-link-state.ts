import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The `state` of the GitHub App install link: who asked to link an installation, signed by this
 * service. GitHub hands it back, unchanged, to the Setup URL after the person installs or
 * configures the App; the setup route then knows which account to link the installation to.
 *
 * `<payload>.<mac>`: the payload is base64url JSON `{accountId, userId, iat, exp}` (seconds), the
 * MAC is HMAC-SHA256 over the payload text with a key derived from `SECRETS_KEY` for this purpose
 * only (HKDF-SHA256). Stateless: nothing is stored until the link is made. No framework in here.
 */

/** How long a state is accepted after it was issued. */
export const LINK_STATE_TTL_SECONDS = 60 * 60;
/** The longest state this service issues is well under this. */
export const MAX_LINK_STATE_LENGTH = 512;

const KEY_INFO = 'platform-api github-app link state v1';
const MAC_BYTES = 32;
const PART = /^[A-Za-z0-9_-]+$/;

export interface LinkStateClaims {
  accountId: number;
  userId: number;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch. */
  exp: number;
}

export type LinkStateCheck =
  { ok: true; claims: LinkStateClaims } | { ok: false; problem: 'malformed' | 'signature' | 'expired' };

/** The signing key: HKDF-SHA256 of the secrets key, bound to this purpose. */
export function linkStateKey(secretsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), KEY_INFO, 32));
}

export function signLinkState(key: Buffer, claims: LinkStateClaims): string {
  const { accountId, userId, iat, exp } = claims;
  const payload = Buffer.from(JSON.stringify({ accountId, userId, iat, exp }), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** A state for the user, valid {@link LINK_STATE_TTL_SECONDS} from `now` (ms). */
export function issueLinkState(key: Buffer, accountId: number, userId: number, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  return signLinkState(key, { accountId, userId, iat, exp: iat + LINK_STATE_TTL_SECONDS });
}

/** Checks the signature first (constant time), then the claims and the expiry at `now` (ms). */
export function verifyLinkState(key: Buffer, state: string, now = Date.now()): LinkStateCheck {
  const parts = state.split('.');
  if (state.length > MAX_LINK_STATE_LENGTH || parts.length !== 2 || !parts.every((p) => PART.test(p))) {
    return { ok: false, problem: 'malformed' };
  }
  const [payload, signature] = parts;
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(key, payload))) {
    return { ok: false, problem: 'signature' };
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  const c = (claims ?? {}) as Record<string, unknown>;
  const id = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
  if (!id(c.accountId) || !id(c.userId) || !id(c.iat) || !id(c.exp) || c.exp <= c.iat) {
    return { ok: false, problem: 'malformed' };
  }
  if (c.exp * 1000 <= now) return { ok: false, problem: 'expired' };
  return { ok: true, claims: { accountId: c.accountId, userId: c.userId, iat: c.iat, exp: c.exp } };
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload, 'utf8').digest();
}
