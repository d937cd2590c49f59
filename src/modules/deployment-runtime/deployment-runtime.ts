/**
 * The port to where deployments run. `GET /deployments/{id}/pods` and `.../logs` read it; the
 * runtime module provides one adapter, chosen by `DEPLOYMENT_RUNTIME`: Kubernetes, or the
 * platform's own records when there is no runtime.
 */

export const LOG_SOURCES = ['production', 'dev'] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

/**
 * The containers a log can be read from: three by name, `INIT` (the pod's first init container)
 * and `MAIN` (its first app container).
 */
export const LOG_CONTAINERS = ['INIT', 'MAIN', 'cubejs-server', 'vector', 'api-proxy'] as const;
export type LogContainer = (typeof LOG_CONTAINERS)[number];
export const DEFAULT_LOG_CONTAINER: LogContainer = 'cubejs-server';

/** A pod of a deployment, in the reference's `DeploymentPod` shape. */
export interface RuntimePod {
  name: string;
  status: string | null;
  ready: boolean | null;
  restartCount: number | null;
  type: string | null;
  containers: string[] | null;
}

/**
 * Where a log line sits in the merged order: its instant (ISO 8601 in UTC, fixed width, so text
 * order is time order), then its pod, then `seq`, which tells apart lines of one pod with the
 * same instant. What `seq` counts is the adapter's (see each); the cursor of a page carries it.
 */
export interface LogPosition {
  at: string;
  pod: string;
  seq: number;
}

export interface RuntimeLogLine {
  date: string;
  pod: string;
  message: string;
  position: LogPosition;
}

export interface LogQuery {
  source: LogSource | null;
  pod: string | null;
  container: LogContainer;
  first: number;
  /** The position of the last line of the previous page; null: the tail. */
  after: LogPosition | null;
}

/**
 * A page of log lines, oldest first. Without `after` it is the tail (the last `first` lines) and
 * `hasEarlier` says whether older lines exist; with `after` it is the lines that follow, and
 * `hasMore` says whether more follow already.
 */
export interface LogPage {
  lines: RuntimeLogLine[];
  hasMore: boolean;
  hasEarlier: boolean;
}

export abstract class DeploymentRuntime {
  /** The deployment's pods, by name. */
  abstract pods(deploymentId: number): Promise<RuntimePod[]>;
  abstract logs(deploymentId: number, query: LogQuery): Promise<LogPage>;
}

/** Total order of log positions: instant, pod, seq. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  if (a.pod !== b.pod) return a.pod < b.pod ? -1 : 1;
  return a.seq - b.seq;
}
