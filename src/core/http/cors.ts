import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { HttpConfig } from '../config/app-config.js';

/** Request headers a browser may send: the token, JSON bodies, request ids, preconditions and retry keys. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
];
/** Response headers a browser script may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'ETag',
  'Location',
  'Idempotent-Replayed',
];
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Seconds a browser may cache a preflight answer (Chromium caps it at 7200). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Cross-origin requests from browsers (single-page apps, spreadsheet add-ins) for the origins in
 * `CORS_ORIGINS`. A listed origin is echoed, with credentials allowed (the API uses no cookies,
 * but a client that sends `credentials: 'include'` still works); `*` allows every origin and then
 * never credentials. Any other origin gets no CORS header at all, so the browser withholds the
 * answer. Preflights (OPTIONS with `Access-Control-Request-Method`) are answered here with 204,
 * before rate limiting and authentication: they carry no token, and nothing behind them runs.
 */
export function corsMiddleware(http: Pick<HttpConfig, 'corsOrigins'>): RequestHandler {
  const wildcard = http.corsOrigins.includes('*');
  const allowed = new Set(http.corsOrigins);
  const handle = cors({
    origin: wildcard ? '*' : (origin, done) => done(null, origin),
    credentials: !wildcard,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
  });

  return (req: Request, res: Response, next: NextFunction) => {
    // Answers differ by Origin whenever it is echoed, so shared caches must key on it.
    if (!wildcard) res.vary('Origin');
    const origin = req.headers.origin;
    const preflight =
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      req.headers['access-control-request-method'] !== undefined;
    const permitted = origin !== undefined && (wildcard || allowed.has(origin));
    if (!permitted) {
      if (!preflight) return next();
      res.status(204).setHeader('Content-Length', '0');
      res.end();
      return;
    }
    // A plain OPTIONS is no preflight: it goes on to the router like any other method.
    if (req.method === 'OPTIONS' && !preflight) return next();
    handle(req, res, next);
  };
}
