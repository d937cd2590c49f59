import { Redis, type RedisOptions } from 'ioredis';

/**
 * A client for work that must never wait on Redis (a rate-limit counter, a result cache): no
 * offline queue, no retry of a command, each command bounded by `commandTimeoutMs`, reconnecting
 * in the background. Its `error` events are swallowed: the caller notices an outage by its
 * failing commands and logs it once.
 */
export function failFastRedis(url: string, commandTimeoutMs = 500): Redis {
  const client = new Redis(url, {
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 250, 3_000),
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * ioredis clients for Bull that fail fast instead of queueing commands while Redis is away:
 * Bull's own client gets no offline queue and one retry per command; its blocking and
 * subscriber clients keep reconnecting in the background, as Bull requires. Bull does not
 * close clients it did not create, so this registry closes them at shutdown.
 */
export class BullRedisClients {
  private readonly clients = new Set<Redis>();

  constructor(private readonly url: string) {}

  create(type: 'client' | 'subscriber' | 'bclient'): Redis {
    const common: RedisOptions = {
      connectTimeout: 2_000,
      retryStrategy: (times) => Math.min(times * 250, 3_000),
    };
    const client =
      type === 'client'
        ? new Redis(this.url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false })
        : new Redis(this.url, { ...common, maxRetriesPerRequest: null, enableReadyCheck: false });
    this.clients.add(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(
      [...this.clients].map(async (client) => {
        this.clients.delete(client);
        if (client.status === 'ready') await client.quit().catch(() => undefined);
        client.disconnect();
      }),
    );
  }
}
