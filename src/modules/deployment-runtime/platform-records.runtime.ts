import { Injectable } from '@nestjs/common';
import { notFound } from '../../core/errors/not-found.js';
import { JobRuns, type OwnerLogLine } from '../../core/queue/job-runs.service.js';
import { deploymentOwner } from '../deployments/deployments.service.js';
import {
  DeploymentRuntime,
  type LogPage,
  type LogQuery,
  type RuntimeLogLine,
  type RuntimePod,
} from './deployment-runtime.js';

/** The name a run goes by in `pod`: its job and id (`deployment.build:42`). */
const runName = (line: Pick<OwnerLogLine, 'job' | 'runId'>): string => `${line.job}:${line.runId}`;
const RUN_NAME = /^([a-z][a-z0-9._-]{0,63}):([1-9]\d{0,17})$/;

/**
 * The default when no runtime is configured (`DEPLOYMENT_RUNTIME` unset or `none`): this service
 * runs no deployment, so there are no pods, and the logs are the platform's own records of the
 * deployment, the log lines of its job runs (builds today, syncs when they come), in time order.
 * Nothing is made up: `pod` of a line is the run that wrote it, as `<job>:<run id>`, and the same
 * name picks that run's lines (`?pod=deployment.build:42`). `source` and `container` select pods
 * and containers, which these records do not have: they leave the records as they are.
 *
 * A line's position is its instant (microseconds) and its id, which orders lines completely.
 */
@Injectable()
export class PlatformRecordsRuntime extends DeploymentRuntime {
  constructor(private readonly runs: JobRuns) {
    super();
  }

  pods(): Promise<RuntimePod[]> {
    return Promise.resolve([]);
  }

  async logs(deploymentId: number, query: LogQuery): Promise<LogPage> {
    const owner = deploymentOwner(deploymentId);
    let runId: string | null = null;
    if (query.pod !== null) {
      const m = RUN_NAME.exec(query.pod);
      const run = m ? await this.runs.get(m[2]) : undefined;
      if (!m || !run || run.owner !== owner || run.job !== m[1]) throw notFound('Pod', query.pod);
      runId = run.id;
    }
    const after = query.after ? { at: query.after.at, id: String(query.after.seq) } : null;
    const rows = await this.runs.ownerLogs(owner, { runId, after, limit: query.first + 1 });
    const more = rows.length > query.first;
    const page = rows.slice(0, query.first);
    if (!after) page.reverse();
    return {
      lines: page.map(toLine),
      hasMore: after ? more : false,
      hasEarlier: after ? true : more,
    };
  }
}

function toLine(row: OwnerLogLine): RuntimeLogLine {
  const pod = runName(row);
  return { date: row.at, pod, message: row.message, position: { at: row.at, pod, seq: Number(row.id) } };
}
