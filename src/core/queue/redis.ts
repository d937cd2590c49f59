import { Redis, type RedisOptions } from 'ioredis';

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
