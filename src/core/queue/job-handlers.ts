import { Injectable } from '@nestjs/common';
import type { JobHandler, JobName, JobPayloads } from './jobs.js';

/**
 * Domain modules register the handler of each of their jobs here at start-up; the Bull
 * processors and the in-process runner both call through it. Handlers must be idempotent and
 * safe to run again after a crash: a job can run more than once. The contract, and `RunLeases`
 * for work with a status of its own, are in `README.md` of this folder.
 */
@Injectable()
export class JobHandlers {
  private readonly handlers = new Map<JobName, JobHandler<JobName>>();

  register<N extends JobName>(name: N, handler: JobHandler<N>): void {
    this.handlers.set(name, handler as JobHandler<JobName>);
  }

  async run<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    const handler = this.handlers.get(name);
    if (!handler) throw new Error(`No handler registered for job ${name}`);
    await handler(payload);
  }
}
