import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Express, Request } from 'express';
import inject from 'light-my-request';
import { markInternalRead } from './internal-read.js';

/** What a GET of the resource answered. */
export interface Representation {
  readonly status: number;
  readonly headers: Readonly<OutgoingHttpHeaders>;
  readonly body: Buffer;
}

/**
 * The caller's headers the read carries: its credential, what it accepts, the host it called, the
 * proxy's view of the connection (read as `trust proxy` says, as for the write) and the request
 * id, so the read is logged under the write's id. Nothing else: no precondition, no body headers.
 */
const CARRIED = [
  'authorization',
  'accept',
  'accept-language',
  'host',
  'user-agent',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
] as const;

/**
 * Copies the methods a prototype defines itself onto the object, so they survive Express's
 * swapping of its prototype: light-my-request's request and response keep their state and
 * capture the answer through them, and Express replaces the prototype of every request it handles.
 */
function pinOwnMethods(target: object): void {
  const proto = Object.getPrototypeOf(target) as object;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || Object.hasOwn(target, name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    if (descriptor && typeof descriptor.value === 'function')
      Object.defineProperty(target, name, { ...descriptor, enumerable: false });
  }
}

/**
 * Reads the current representation of `path` as the caller of `req` would: a GET injected into the
 * same Express application (light-my-request: no socket, no port), carrying the caller's
 * credential, headers and address, so the same authentication, access rules and serialisation
 * apply and the ETag is the one a GET answers. The application is handed over wrapped, never
 * itself: light-my-request would otherwise re-parent Express's shared request and response
 * prototypes for good, breaking real requests.
 */
export function currentRepresentationReader(app: Express) {
  return async (req: Request, path: string): Promise<Representation> => {
    const headers: Record<string, string | string[]> = {};
    for (const name of CARRIED) {
      const value = req.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    // The write's id, whether the caller sent it or it was made for the write.
    if (typeof req.id === 'string') headers['x-request-id'] = req.id;
    const encrypted = (req.socket as TLSSocket | undefined)?.encrypted === true;
    const dispatch = (injected: IncomingMessage, res: ServerResponse) => {
      pinOwnMethods(injected);
      pinOwnMethods(res);
      markInternalRead(injected);
      // The path exactly as the write had it (light-my-request normalises it as a URL would).
      injected.url = path;
      // Over TLS when the write came over TLS (the HTTPS rule reads the socket).
      if (encrypted) Object.assign(injected.socket, { encrypted: true });
      app(injected as Request, res as never);
    };
    const answer = await inject(dispatch, {
      method: 'GET',
      url: path,
      headers,
      remoteAddress: req.socket?.remoteAddress ?? '127.0.0.1',
    });
    return { status: answer.statusCode, headers: answer.headers, body: answer.rawPayload };
  };
}
