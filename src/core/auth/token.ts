import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PREFIX = 'pat_';
/** A token is the prefix plus 43 base64url characters (32 random bytes). */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,200}$/;

export interface IssuedToken {
  token: string;
  hash: string;
  prefix: string;
}

export function issueToken(): IssuedToken {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), prefix: token.slice(0, 12) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** `Basic base64(user:token)`: how git's client sends a token (as the password). */
const BASIC_AUTHORIZATION = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** The password of a Basic credential (the user name is not read), or undefined. */
export function basicPassword(authorization: string): string | undefined {
  const encoded = BASIC_AUTHORIZATION.exec(authorization)?.[1];
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 || colon === decoded.length - 1 ? undefined : decoded.slice(colon + 1);
}
