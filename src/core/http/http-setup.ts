import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '../config/app-config.js';
import { assignRequestId } from '../logging/logging.module.js';
import { corsMiddleware } from './cors.js';
import { errorBody, sendError, toErrorBody } from '../errors/exception.filter.js';
import { checkParsedInput, JSON_MEDIA_TYPES, requireJsonBody } from './input-guards.js';
import { serialiseListItemsOnce } from './json-body.js';
import { configureRateLimits } from '../rate-limit/rate-limit.js';
import { behaviourOf, RouteBehaviours } from './route-behaviour.js';
import { GitReadCredentials } from '../auth/git-read-credentials.js';
import { basicPassword } from '../auth/token.js';
import { configureConditionalRequests } from './conditional/conditional-requests.js';

const PROBES = /^\/health\/(live|ready)\/?$/;

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** Whether the request carries a token at all (`Bearer` or `Api-Key`); checked later by the guard. */
const CARRIES_TOKEN = /^(?:Bearer|Api-Key) +\S/i;

/**
 * The JSON body parser: `BODY_LIMIT` on every route, except the routes declared with
 * `@JsonBodyLimit(...)` (route-behaviour.ts), which get their own limit (one parser per distinct limit, made once). The
 * body is parsed before the guard authenticates the caller, so a request that does not even
 * carry a token keeps `BODY_LIMIT` there too; one with a bad token is counted by the limiter of
 * failed authentications, which refuses its address before parsing once it is spent.
 */
function jsonBodies(bodyLimit: string): Middleware {
  const parser = (limit: string | number): Middleware =>
    express.json({ limit, strict: true, type: JSON_MEDIA_TYPES });
  const standard = parser(bodyLimit);
  const large = new Map<number, Middleware>();
  return (req, res, next) => {
    const limit = behaviourOf(req).jsonLimit;
    if (limit === null || !CARRIES_TOKEN.test(req.headers.authorization ?? ''))
      return standard(req, res, next);
    let json = large.get(limit);
    if (!json) large.set(limit, (json = parser(limit)));
    json(req, res, next);
  };
}

/**
 * Express-level conventions, applied before Nest's router: HTTPS enforcement, CORS, security
 * headers, rate limiting, the JSON body parser with its size limit, and rejection of NUL characters
 * (PostgreSQL cannot store them). Every failure answers in the one error shape.
 */
/** The routes of a git fetch (smart HTTP, upload-pack). */
const GIT_FETCH = /^\/build\/api\/v1\/deployments\/\d+\/git\/(info\/refs|git-upload-pack)$/;

export function configureHttp(app: NestExpressApplication, config: AppConfig): void {
  const { http } = config;
  app.set('trust proxy', http.trustProxy);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  serialiseListItemsOnce(app.getHttpAdapter().getInstance());

  const behaviours = app.get(RouteBehaviours);
  app.use((req: Request, res: Response, next: NextFunction) => {
    assignRequestId(req, res);
    // What the route declares (body limit, multipart, error shape), before anything can answer.
    behaviours.tag(req);
    next();
  });
  const podFetches = config.runtime.kubernetes !== null;
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (http.allowHttp || req.secure || PROBES.test(req.path)) return next();
    // A deployment's pods fetch its model inside the cluster, over plain HTTP, with a git read
    // credential: a short-lived, read-only credential of one deployment, taken on no other route.
    if (
      podFetches &&
      GIT_FETCH.test(req.path) &&
      GitReadCredentials.isOne(basicPassword(req.headers.authorization ?? '') ?? '')
    )
      return next();
    sendError(
      req,
      res,
      errorBody(403, 'https_required', 'This API is only served over HTTPS; retry with https://'),
    );
  });
  app.use(corsMiddleware(http));

  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          upgradeInsecureRequests: http.allowHttp ? null : [],
        },
      },
      hsts: http.allowHttp ? false : { maxAge: 31_536_000, includeSubDomains: true },
    }),
  );

  configureRateLimits(app, config);

  app.use(requireJsonBody);
  app.use(jsonBodies(http.bodyLimit));
  app.use(checkParsedInput);
  configureConditionalRequests(app);
  // Errors raised by the middleware above (malformed JSON, body too large) in the one shape.
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendError(req, res, toErrorBody(err));
  });
}
