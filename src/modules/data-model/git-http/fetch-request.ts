import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Request } from 'express';
import { gitHttpError } from './git-http.errors.js';

export const UPLOAD_PACK_REQUEST = 'application/x-git-upload-pack-request';

/** `identity` when the body is sent as is; git gzips a large request. */
const contentEncoding = (req: Request): string =>
  (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();

/** Refuses, before a byte of it is read, a fetch request whose body git would not have sent. */
export function checkFetchRequest(req: Request): void {
  if (!req.is(UPLOAD_PACK_REQUEST)) {
    throw gitHttpError('unsupported_media_type', `Send the body as ${UPLOAD_PACK_REQUEST}, as git does`);
  }
  const encoding = contentEncoding(req);
  if (encoding !== 'identity' && encoding !== 'gzip') {
    throw gitHttpError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not taken: send gzip or none`,
    );
  }
}

/** Passes bytes on until more than `maxBytes` went through, then fails with 413. */
function byteCap(maxBytes: number, what: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      done(gitHttpError('payload_too_large', `The request body is larger than ${maxBytes} bytes ${what}`));
    },
  });
}

/** zlib's failures (`Z_DATA_ERROR`, `Z_BUF_ERROR`) on a body that is not whole gzip are the client's. */
const clientError = (err: Error): Error =>
  /^Z_/.test((err as NodeJS.ErrnoException).code ?? '')
    ? gitHttpError('validation_failed', ['The request body is not valid gzip'])
    : err;

/** A fetch request's body, being read. */
export interface FetchBody {
  /** The body's bytes, decompressed, as they arrive. */
  readonly chunks: Readable;
  /** Stops reading: the request is left unread (its answer closes the connection). */
  stop(): void;
}

/**
 * The body of a fetch request as it arrives, decompressed, and counted against `maxBytes` both as
 * sent and as decompressed (a small gzip body can inflate a thousandfold). Any failure (too large,
 * not gzip, the client gone) errors `chunks`. The request itself is never destroyed, only left
 * unread, so an answer can still go out on its connection.
 */
export function fetchRequestBody(req: Request, maxBytes: number): FetchBody {
  const stages: Transform[] = [byteCap(maxBytes, 'as sent')];
  if (contentEncoding(req) === 'gzip') stages.push(createGunzip(), byteCap(maxBytes, 'once decompressed'));
  let upstream: Readable = req;
  for (const stage of stages) {
    // pipe() passes data on but not errors: each stage's failure ends the next, up to the last.
    upstream.on('error', (err) => stage.destroy(clientError(err)));
    upstream = upstream.pipe(stage);
  }
  // Read through iteration while it lasts; an error after the reader stopped concerns nobody.
  upstream.on('error', () => undefined);
  return {
    chunks: upstream,
    stop: () => {
      req.unpipe();
      for (const stage of stages) stage.destroy();
    },
  };
}
