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
