import { AsyncLocalStorage } from 'node:async_hooks';
import { BoundedClient } from '../../src/core/database/bounded-client.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestApp } from './app.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const HEADER = 'x-test-count-queries';

/**
 * Counts the queries one HTTP request makes itself, and only those: the request runs in an
 * async context of its own, and a query counts when it is issued from that context. Background
 * work sharing the connection pool (the outbox relay's polling, timers) runs outside it, so it
 * never changes the count however busy the machine is.
 */
export async function countRequestQueries<T>(
  t: TestApp,
  send: (header: Record<string, string>) => Promise<T>,
): Promise<{ result: T; queries: string[] }> {
  const server = t.app.getHttpServer();
  const store = new AsyncLocalStorage<string>();
  const tag = `count-${Math.random().toString(36).slice(2)}`;
  const original = server.listeners('request') as Listener[];
  const wrapped: Listener = (req, res) => {
    const run = () => original.forEach((l) => l.call(server, req, res));
    if (req.headers[HEADER] === tag) store.run(tag, run);
    else run();
  };
  const queries: string[] = [];
  // Every statement of the pool's connections, whether sent through TypeORM (units of work) or
  // straight to the pool (reads outside one): the client class both use.
  const query = BoundedClient.prototype.query;
  const spy = jest.spyOn(BoundedClient.prototype, 'query').mockImplementation(function (
    this: BoundedClient,
    ...args: unknown[]
  ) {
    const [first] = args as [string | { text: string }];
    if (store.getStore() === tag) queries.push(typeof first === 'string' ? first : first.text);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  });
  server.removeAllListeners('request');
  server.on('request', wrapped);
  try {
    const result = await send({ [HEADER]: tag });
    return { result, queries };
  } finally {
    server.removeListener('request', wrapped);
    for (const l of original) server.on('request', l);
    spy.mockRestore();
  }
}
