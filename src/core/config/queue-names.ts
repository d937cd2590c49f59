/**
 * The Bull queues (one each in Redis when REDIS_URL is set). A queue is a unit of deployment:
 * a worker role processes the queues named in `WORKER_QUEUES`, so long builds and short jobs can
 * run on different workers. A job names its queue in its definition (`defineJob`).
 */
export const QUEUE_NAMES = ['builds', 'default'] as const;

export type QueueName = (typeof QUEUE_NAMES)[number];

export function isQueueName(name: string): name is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(name);
}
