import type { NextFunction, Request, Response } from 'express';
import { errorBody, sendError } from '../errors/exception.filter.js';
import { behaviourOf } from './route-behaviour.js';

/**
 * The deepest nesting of arrays and objects a JSON body may have. The deepest DTO needs fewer
 * than ten levels; free-form JSON (workbook `meta`, dashboard layouts) gets room to spare. The
 * transformer and validator recurse once per level, so a deeper body (1,300 levels fit in
 * 2.6 KB) would overflow the stack and answer 500.
 */
export const MAX_JSON_DEPTH = 64;

/** Media types a body may be sent as: JSON, and JSON-based types such as `application/scim+json`. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/** `String.prototype.isWellFormed` is in Node 20 but not in the ES2023 library typings. */
type MaybeWellFormed = string & { isWellFormed(): boolean };
const wellFormed = (s: string): boolean => (s as MaybeWellFormed).isWellFormed();

/** Whether a request carries a body: a positive Content-Length, or a Transfer-Encoding. */
function carriesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0' && Number(length) !== 0;
}

/**
 * Refuses a body that is not JSON with 415, before it is read (multipart bodies only on the
 * routes declared `@Multipart()`, and a route's own media type on those declared
 * `@StreamedBody(...)`, route-behaviour.ts): the JSON parser skips other media types, so such a
 * body would otherwise reach the handler as `{}` and create things. A request without a body
 * needs no Content-Type.
 */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!carriesBody(req) || req.is(JSON_MEDIA_TYPES)) return next();
  const behaviour = behaviourOf(req);
  if (req.is('multipart/form-data') && behaviour.multipart) return next();
  if (behaviour.streamedBody !== undefined && req.is(behaviour.streamedBody)) return next();
  sendError(
    req,
    res,
    errorBody(
      415,
      'unsupported_media_type',
      'Send the request body as JSON, with Content-Type: application/json (or application/scim+json on SCIM routes)',
    ),
  );
}

type Problem = 'too_deep' | 'ill_formed' | 'nul';

/** What is wrong with one string or key of a body, if anything. */
const textProblem = (s: string): Problem | null =>
  s.includes('\u0000') ? 'nul' : wellFormed(s) ? null : 'ill_formed';

/**
 * Walks a parsed body once, without recursion (so hostile input cannot overflow the stack here
 * either): nesting deeper than {@link MAX_JSON_DEPTH}; a string or key that is not well-formed
 * Unicode (a lone UTF-16 surrogate such as `"\ud800"`), which validators and PostgreSQL's UTF-8
 * cannot handle; or one holding a NUL character, which PostgreSQL cannot store.
 */
export function inspectJson(value: unknown): Problem | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return problem;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return 'too_deep';
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(v)) {
      const problem = textProblem(key);
      if (problem) return problem;
      stack.push([item, depth + 1]);
    }
  }
  return null;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * Whether the URL's percent-encoded bytes are UTF-8. A surrogate (`%ED%A0%80`) or other
 * invalid sequence is not: the query parser would silently turn it into U+FFFD and the path
 * decoder would fail, so it is refused as invalid characters instead. A `%` not followed by two
 * hex digits stays a literal `%`, as the parsers read it.
 */
export function urlIsUtf8(rawUrl: string): boolean {
  if (!rawUrl.includes('%') && !/[\u0080-\uffff]/.test(rawUrl)) return true;
  const bytes = new Uint8Array(rawUrl.length);
  let n = 0;
  for (let i = 0; i < rawUrl.length; i++) {
    const c = rawUrl.charCodeAt(i);
    if (c === 0x25 && isHex(rawUrl.charCodeAt(i + 1)) && isHex(rawUrl.charCodeAt(i + 2))) {
      bytes[n++] = parseInt(rawUrl.slice(i + 1, i + 3), 16);
      i += 2;
    } else if (c <= 0xff) {
      // Node hands the raw request-target over byte for byte (latin1).
      bytes[n++] = c;
    } else {
      return false;
    }
  }
  try {
    UTF8.decode(bytes.subarray(0, n));
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks the parsed input before any route sees it: nesting depth of the body
 * (`400 validation_failed`), and NUL characters and ill-formed Unicode in the URL and the body
 * (`400 invalid_characters`).
 */
export function checkParsedInput(req: Request, res: Response, next: NextFunction): void {
  const problem = /%00/.test(req.originalUrl) ? 'nul' : inspectJson(req.body);
  if (problem === 'nul') {
    sendError(req, res, errorBody(400, 'invalid_characters', 'The request contains a NUL character'));
    return;
  }
  if (!urlIsUtf8(req.originalUrl)) {
    sendError(
      req,
      res,
      errorBody(400, 'invalid_characters', 'The URL contains a percent-encoded sequence that is not UTF-8'),
    );
    return;
  }
  if (problem === 'too_deep') {
    sendError(
      req,
      res,
      errorBody(400, 'validation_failed', [
        `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      ]),
    );
    return;
  }
  if (problem === 'ill_formed') {
    sendError(
      req,
      res,
      errorBody(
        400,
        'invalid_characters',
        'The request body contains a string that is not well-formed Unicode (a lone UTF-16 surrogate)',
      ),
    );
    return;
  }
  next();
}
