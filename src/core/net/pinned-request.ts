import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { PinnedAddress } from './outbound-address.js';

/**
 * A `lookup` for Node's sockets that answers the pinned address whatever name it is asked, so
 * the connection goes where the outbound rule checked (TLS still checks the certificate against
 * the URL's host name).
 */
export function pinnedLookup(pin: PinnedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: pin.address, family: pin.family },
      ]);
    } else {
      callback(null, pin.address, pin.family);
    }
  };
}

export interface PinnedRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

const NO_BODY = new Set([204, 205, 304]);

/**
 * An HTTP(S) request to `url` connected to `pin` (see {@link pinUrl}), answered as a fetch
 * `Response` (its body a stream, for `readBoundedText`). A fresh connection each time (no pooled
 * socket connected for an earlier check), no redirect followed, nothing decompressed.
 */
export function requestPinned(url: string, pin: PinnedAddress, init: PinnedRequestInit): Promise<Response> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const headers =
    init.body === undefined
      ? init.headers
      : { ...init.headers, 'Content-Length': String(Buffer.byteLength(init.body)) };
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      { method: init.method, headers, signal: init.signal, lookup: pinnedLookup(pin), agent: false },
      (res) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
        }
        const status = res.statusCode ?? 0;
        try {
          const body = NO_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          if (body === null) res.resume();
          resolve(new Response(body, { status, headers }));
        } catch (err) {
          // A status a Response cannot hold (below 200): the answer is not one.
          res.destroy();
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
