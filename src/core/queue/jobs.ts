/** Queues, each a Bull queue when Redis is configured. */
export enum QueueName {
  Builds = 'builds',
}

/** Every job the service runs, with its payload. */
export interface JobPayloads {
  'deployment.build': { buildId: number };
}

export type JobName = keyof JobPayloads;

export const JOB_QUEUES: { readonly [N in JobName]: QueueName } = {
  'deployment.build': QueueName.Builds,
};

export type JobHandler<N extends JobName> = (payload: JobPayloads[N]) => Promise<void>;
