import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One POST as the receiver took it. */
export interface ReceivedWebhook {
  method: string;
  /** The path and query the request was sent to. */
  path: string;
  /** Header names lower-case; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The body exactly as it came. */
  body: string;
  /** The status the receiver answered (0: none, it hung). */
  status: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port><path>` (default path `/hook`). */
  url(path?: string): string;
  /** Every request received so far, in order. */
  readonly received: ReceivedWebhook[];
  /** The requests that carried `webhook-id` `id`. */
  withId(id: string): ReceivedWebhook[];
  /**
   * The statuses to answer the next requests with, in order (`answer(500, 200)`: a 500, then a
   * 200; `'hang'`: no answer at all, the connection left open until the client gives up); once
   * used up, `200`. Replaces what was left of an earlier program.
   */
  answer(...statuses: Answer[]): void;
  /** Answers every request with `status` until told otherwise. */
  answerAlways(status: number): void;
  /**
   * Runs `hook` on each request once it is recorded and before it is answered (null: none): where
   * a test acts while a delivery is being sent.
   */
  beforeAnswer(hook: ((request: ReceivedWebhook) => Promise<void> | void) | null): void;
  /**
   * Whether `secret` verifies the request's signature, by the `standardwebhooks` package (an
   * implementation of the scheme independent of ours): one of the `v1` signatures of
   * `webhook-signature` over `<webhook-id>.<webhook-timestamp>.<body>`, with a timestamp within
   * five minutes.
   */
  verifies(request: ReceivedWebhook, secret: string): boolean;
  /** The body parsed as JSON. */
  event(request: ReceivedWebhook): Record<string, unknown>;
  /** Resolves once at least `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Forgets the requests received (not the programmed answers). */
  clear(): void;
  close(): Promise<void>;
}

/** A status to answer, or `hang`: never answer (the client's timeout ends it). */
export type Answer = number | 'hang';

/** What the receiver says to an answer it was told to give: a little body, as a real endpoint might. */
const BODY: Record<number, string> = { 500: 'receiver says: try later', 200: 'ok' };

/**
 * A webhook receiver on loopback (a real HTTP server on 127.0.0.1, a port of its own), for tests
 * that deliver to it: it records each request, answers a programmed sequence of statuses, and
 * verifies signatures with the `standardwebhooks` package.
 *
 * ```ts
 * const receiver = await startWebhookReceiver();
 * receiver.answer(500, 200);
 * // ... deliver twice ...
 * expect(receiver.verifies(receiver.received[0], secret)).toBe(true);
 * await receiver.close();
 * ```
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let program: Answer[] = [];
  let always: number | null = null;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let hook: ((request: ReceivedWebhook) => Promise<void> | void) | null = null;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = always ?? program.shift() ?? 200;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const request: ReceivedWebhook = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        status: status === 'hang' ? 0 : status,
      };
      received.push(request);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      if (status === 'hang') return;
      void Promise.resolve(hook?.(request)).finally(() => {
        res.writeHead(status, { 'Content-Type': 'text/plain' });
        res.end(BODY[status] ?? `status ${status}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    withId: (id) => received.filter((r) => r.headers['webhook-id'] === id),
    answer: (...statuses) => {
      program = [...statuses];
      always = null;
    },
    answerAlways: (status) => {
      always = status;
    },
    beforeAnswer: (next) => {
      hook = next;
    },
    verifies: (request, secret) => {
      try {
        new Webhook(secret).verify(request.body, {
          'webhook-id': request.headers['webhook-id'] ?? '',
          'webhook-timestamp': request.headers['webhook-timestamp'] ?? '',
          'webhook-signature': request.headers['webhook-signature'] ?? '',
        });
        return true;
      } catch {
        return false;
      }
    },
    event: (request) => JSON.parse(request.body) as Record<string, unknown>,
    waitFor: (count, timeoutMs = 10_000) =>
      received.length >= count
        ? Promise.resolve(received)
        : new Promise<ReceivedWebhook[]>((resolve, reject) => {
            const timer = setTimeout(
              () =>
                reject(new Error(`${received.length} of ${count} webhook requests within ${timeoutMs} ms`)),
              timeoutMs,
            );
            waiters.push({
              count,
              resolve: () => {
                clearTimeout(timer);
                resolve(received);
              },
            });
          }),
    clear: () => {
      received.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
