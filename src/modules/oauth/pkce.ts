import { createHash, randomBytes } from 'node:crypto';

/** A `state` value: 32 random bytes, base64url (43 characters). */
export const STATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const newState = (): string => randomBytes(32).toString('base64url');

/** A PKCE code verifier (RFC 7636 4.1): 32 random bytes, base64url, so 43 unreserved characters. */
export const newCodeVerifier = (): string => randomBytes(32).toString('base64url');

/** The S256 code challenge (RFC 7636 4.2): BASE64URL(SHA256(ASCII(code_verifier))). */
export const codeChallenge = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** What is stored of a state: its SHA-256, hex. */
export const hashState = (state: string): string => createHash('sha256').update(state, 'utf8').digest('hex');
