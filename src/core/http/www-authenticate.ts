import type { Request, Response } from 'express';

/** The protection space of every token this service takes (Platform API, SCIM, embed). */
export const AUTH_REALM = 'api';

/** A token sent with a scheme we take: `Bearer <token>`, or `Api-Key <token>` for compatibility. */
const TOKEN_SENT = /^(Bearer|Api-Key) +\S+/i;

/**
 * The challenge every 401 carries (RFC 9110 section 11.6.1; RFC 7644 section 2 for SCIM). Per
 * RFC 6750 section 3.1, `error="invalid_token"` only when a token was sent and refused: a
 * request without one (or with a scheme we do not take) gets the bare challenge.
 */
export function bearerChallenge(req: Request): string {
  const sent = TOKEN_SENT.test(req.headers.authorization ?? '');
  return `Bearer realm="${AUTH_REALM}"${sent ? ', error="invalid_token"' : ''}`;
}

/** Sets the challenge on a 401 answer; other statuses are left alone. */
export function challengeIfUnauthorized(req: Request, res: Response, status: number): void {
  if (status === 401) res.setHeader('WWW-Authenticate', bearerChallenge(req));
}
