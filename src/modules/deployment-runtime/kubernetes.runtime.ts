import { Logger } from '@nestjs/common';
import type { CoreV1Api, Observable, V1Pod } from '@kubernetes/client-node';
import { ApiError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  DeploymentRuntime,
  type LogContainer,
  type LogPage,
  type LogQuery,
  type LogSource,
  type RuntimePod,
} from './deployment-runtime.js';
import type { KubernetesTarget } from './kubernetes-config.js';
import { afterPage, parsePodLog, sinceTimeOf, tailPage, type PodRead } from './pod-logs.js';
import { runtimeError } from './runtime.errors.js';

/** Most bytes read of one pod's log per request: a bound on memory, whatever the lines' length. */
const LOG_READ_LIMIT_BYTES = 4 * 1024 * 1024;
/** Pod logs read at the same time for one request. */
const LOG_READ_CONCURRENCY = 8;

/** The per-call options of the generated client: middleware that sees each request before it goes. */
type CallOptions = NonNullable<Parameters<CoreV1Api['listNamespacedPod']>[1]>;
type Middleware = NonNullable<CallOptions['middleware']>[number];

/**
 * Deployments as pods of one Kubernetes namespace: a deployment's pods carry the labels
 * `deployment=<id>` and `source=production|dev` (and optionally `type=<role>`, shown as the pod's
 * type). Reads pods with `listNamespacedPod` (label selector) and logs with
 * `readNamespacedPodLog` (`container`, `tailLines`, `timestamps`, `limitBytes`, and `sinceTime`,
 * which the 1.x client does not expose and a middleware adds to the query).
 *
 * Every request to us gets one deadline (`DEPLOYMENT_RUNTIME_TIMEOUT_MS`) for all its calls: an
 * abort signal on each, and a race for what does not watch it (credential plugins). What goes
 * wrong becomes `runtime_unavailable` (503: out of reach, too slow, overloaded) or
 * `runtime_failed` (502: credentials, permissions, a failure), never the API server's answer
 * itself, which could quote our request.
 */
export class KubernetesRuntime extends DeploymentRuntime {
  private readonly logger = new Logger('KubernetesRuntime');
  private readonly namespace: string;

  constructor(
    private readonly api: CoreV1Api,
    target: Pick<KubernetesTarget, 'namespace'>,
    private readonly timeoutMs: number,
    /** The client's own `Observable` (its middleware answers with one). */
    private readonly observable: new <T>(promise: Promise<T>) => Observable<T>,
  ) {
    super();
    this.namespace = target.namespace;
  }

  pods(deploymentId: number): Promise<RuntimePod[]> {
    return this.bounded('list pods', async (signal) =>
      (await this.listPods(deploymentId, null, signal)).map(toPod),
    );
  }

  logs(deploymentId: number, query: LogQuery): Promise<LogPage> {
    return this.bounded('read pod logs', async (signal) => {
      let pods = await this.listPods(deploymentId, query.source, signal);
      if (query.pod !== null) {
        pods = pods.filter((p) => p.metadata?.name === query.pod);
        if (pods.length === 0) throw notFound('Pod', query.pod);
      }
      const targets = pods.flatMap((pod) => {
        const container = containerOf(pod, query.container);
        return container ? [{ pod: pod.metadata!.name!, container, started: started(pod, container) }] : [];
      });
      if (query.pod !== null && targets.length === 0) {
        throw runtimeError('validation_failed', [
          `container: pod ${query.pod} has no ${query.container} container`,
        ]);
      }
      const reads = await mapLimit(
        targets.filter((t) => t.started),
        LOG_READ_CONCURRENCY,
        (t) => this.readLog(t.pod, t.container, query, signal),
      );
      return query.after ? afterPage(reads, query.after, query.first) : tailPage(reads, query.first);
    });
  }

  /** The deployment's pods (of `source`, else of both sources), by name. */
  private async listPods(
    deploymentId: number,
    source: LogSource | null,
    signal: AbortSignal,
  ): Promise<V1Pod[]> {
    const labelSelector = `deployment=${deploymentId},source${source ? `=${source}` : ' in (production,dev)'}`;
    const list = await this.api.listNamespacedPod(
      { namespace: this.namespace, labelSelector },
      this.callOptions(signal, {}),
    );
    return (list.items ?? [])
      .filter((p) => p.metadata?.name)
      .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  }

  /**
   * One pod's lines: its tail (`first + 1` lines, to know whether older ones exist), or what
   * follows the second of `after`. A pod gone since the list (404) or whose container cannot
   * give logs yet (400) has none.
   */
  private async readLog(
    pod: string,
    container: string,
    query: LogQuery,
    signal: AbortSignal,
  ): Promise<PodRead> {
    let text: string;
    try {
      text = await this.api.readNamespacedPodLog(
        {
          name: pod,
          namespace: this.namespace,
          container,
          timestamps: true,
          limitBytes: LOG_READ_LIMIT_BYTES,
          ...(query.after ? {} : { tailLines: query.first + 1 }),
        },
        this.callOptions(signal, query.after ? { sinceTime: sinceTimeOf(query.after.at) } : {}),
      );
    } catch (err) {
      const status = statusOf(err);
      if (status === 400 || status === 404) return { lines: [], truncated: false };
      throw err;
    }
    const truncated = Buffer.byteLength(text ?? '') >= LOG_READ_LIMIT_BYTES;
    return { lines: parsePodLog(pod, text ?? '', truncated), truncated };
  }

  /** The call's abort signal, plus query parameters the generated client does not know. */
  private callOptions(signal: AbortSignal, query: Record<string, string>): CallOptions {
    const middleware: Middleware = {
      pre: (context) => {
        context.setSignal(signal);
        for (const [name, value] of Object.entries(query)) context.setQueryParam(name, value);
        return new this.observable(Promise.resolve(context));
      },
      post: (response) => new this.observable(Promise.resolve(response)),
    };
    return { middleware: [middleware], middlewareMergeStrategy: 'append' };
  }

  /** Runs `work` with the deadline of one request; maps what fails to our error codes. */
  private async bounded<T>(what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new DeadlineExceeded());
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([work(controller.signal), expired]);
    } catch (err) {
      throw this.failure(what, err, controller.signal.aborted);
    } finally {
      clearTimeout(timer);
      // Reads of other pods still under way when one failed are not needed any more.
      controller.abort();
    }
  }

  private failure(what: string, err: unknown, timedOut: boolean): ApiError {
    if (err instanceof ApiError) return err;
    const status = statusOf(err);
    const ns = `namespace "${this.namespace}"`;
    if (timedOut || err instanceof DeadlineExceeded) {
      this.logger.warn(`Kubernetes API: ${what} in ${ns} did not finish within ${this.timeoutMs} ms`);
      return runtimeError(
        'runtime_unavailable',
        `The Kubernetes API did not answer within ${this.timeoutMs} ms; retry shortly`,
      );
    }
    if (status === undefined) {
      const code = (err as { code?: unknown }).code;
      const reason = typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : 'network error';
      this.logger.warn(`Kubernetes API: ${what} in ${ns} failed: ${(err as Error).message ?? String(err)}`);
      return runtimeError(
        'runtime_unavailable',
        `The Kubernetes API could not be reached (${reason}); retry shortly`,
      );
    }
    this.logger.warn(`Kubernetes API: ${what} in ${ns} answered ${status}`);
    if (status === 401) {
      return runtimeError(
        'runtime_failed',
        'The Kubernetes API refused this service’s credentials (401 Unauthorized); check its token or certificate',
      );
    }
    if (status === 403) {
      return runtimeError(
        'runtime_failed',
        `The Kubernetes API denied this service access to pods in ${ns} (403 Forbidden); ` +
          'it needs get and list on pods and get on pods/log',
      );
    }
    if (status === 429 || status === 503 || status === 504) {
      return runtimeError(
        'runtime_unavailable',
        `The Kubernetes API is overloaded or unavailable (${status}); retry shortly`,
      );
    }
    return runtimeError('runtime_failed', `The Kubernetes API failed to ${what} (${status})`);
  }
}

class DeadlineExceeded extends Error {}

/** The HTTP status of an `ApiException` of the client, if `err` is one. */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The container `container` names in `pod`: by name, or the first init (`INIT`) or app (`MAIN`) one. */
function containerOf(pod: V1Pod, container: LogContainer): string | null {
  if (container === 'INIT') return pod.spec?.initContainers?.[0]?.name ?? null;
  if (container === 'MAIN') return pod.spec?.containers[0]?.name ?? null;
  return pod.spec?.containers.some((c) => c.name === container) ? container : null;
}

/** Whether a container has run, so that it has a log (one still waiting to start has none). */
function started(pod: V1Pod, container: string): boolean {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const s = statuses.find((c) => c.name === container);
  return Boolean(
    s && (s.state?.running || s.state?.terminated || s.lastState?.terminated || s.restartCount > 0),
  );
}

function toPod(pod: V1Pod): RuntimePod {
  const statuses = pod.status?.containerStatuses;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    name: pod.metadata!.name!,
    status: podStatus(pod),
    ready: ready ? ready.status === 'True' : null,
    restartCount: statuses ? statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0) : null,
    type: pod.metadata?.labels?.type ?? null,
    containers: pod.spec?.containers.map((c) => c.name) ?? null,
  };
}

/** As kubectl's STATUS column, roughly: terminating, a waiting container's reason, else the phase. */
function podStatus(pod: V1Pod): string | null {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  const waiting = pod.status?.containerStatuses?.find((s) => s.state?.waiting?.reason)?.state?.waiting
    ?.reason;
  return waiting ?? pod.status?.reason ?? pod.status?.phase ?? null;
}

/** `work` over `items`, at most `limit` at a time, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
