import { Redis, type RedisOptions } from 'ioredis';

/**
 * ioredis clients for Bull that fail fast instead of queueing commands while Redis is away:
 * Bull's own client gets no offline queue and one retry per command; its blocking and
 * subscriber clients keep reconnecting in the background, as Bull requires.
 */
export function createBullRedisClient(url: string, type: 'client' | 'subscriber' | 'bclient'): Redis {
  const common: RedisOptions = {
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 250, 3_000),
    lazyConnect: false,
  };
  if (type === 'client') {
    return new Redis(url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, enableReadyCheck: true });
  }
  return new Redis(url, { ...common, maxRetriesPerRequest: null, enableReadyCheck: false });
}
