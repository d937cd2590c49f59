import type {
  AppsV1Api,
  CoreV1Api,
  KubernetesObject,
  NetworkingV1Api,
  Observable,
  Watch,
} from '@kubernetes/client-node';
import { FIELD_MANAGER, type ManagedKind, type Manifest } from './kubernetes-manifests.js';

/** What went wrong talking to the cluster, sorted for the deploy state and the job's retries. */
export type ClusterFailure = 'unreachable' | 'forbidden' | 'conflict' | 'invalid' | 'failed';

/**
 * A refused or failed call to the Kubernetes API. `message` is ours and safe to record (a run
 * record, a deploy state): it names the call, the object and the API server's reason, never a
 * request body (which may hold a Secret's data).
 */
export class ClusterError extends Error {
  constructor(
    readonly failure: ClusterFailure,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** An object as listed: its name, labels, generation and (Deployments) status. */
export type ListedObject = KubernetesObject & {
  metadata: { name: string; labels?: Record<string, string>; generation?: number; resourceVersion?: string };
  spec?: { replicas?: number };
  status?: unknown;
};

export interface KubernetesApis {
  core: CoreV1Api;
  apps: AppsV1Api;
  networking: NetworkingV1Api;
  watch: Watch;
  /** The client's own `Observable` (its middleware answers with one). */
  observable: new <T>(promise: Promise<T>) => Observable<T>;
}

type CallOptions = NonNullable<Parameters<CoreV1Api['listNamespacedPod']>[1]>;
type Middleware = NonNullable<CallOptions['middleware']>[number];

/** The API path of each kind's collection in a namespace (for watches). */
const COLLECTION: Record<ManagedKind, (ns: string) => string> = {
  Secret: (ns) => `/api/v1/namespaces/${ns}/secrets`,
  Service: (ns) => `/api/v1/namespaces/${ns}/services`,
  NetworkPolicy: (ns) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
  Deployment: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
};

/** What the API server's RBAC calls each kind (for messages naming a missing permission). */
const RESOURCE: Record<ManagedKind, string> = {
  Secret: 'secrets',
  Service: 'services',
  NetworkPolicy: 'networkpolicies.networking.k8s.io',
  Deployment: 'deployments.apps',
};

/**
 * The calls the reconciler makes, on one namespace, through `@kubernetes/client-node`'s typed
 * APIs: server-side apply (`application/apply-patch+yaml`, this service's field manager, strict
 * field validation), list by label selector, delete, and a watch of Deployments. Every call has
 * a deadline (`DEPLOYMENT_RUNTIME_TIMEOUT_MS`); every failure becomes a {@link ClusterError}.
 */
export class KubernetesCluster {
  constructor(
    private readonly apis: KubernetesApis,
    readonly namespace: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Server-side apply of `manifest`. `force` takes over fields another manager set (for objects
   * this service owns); without it an object someone else made is never taken over: the API
   * server answers 409, a `conflict` failure.
   */
  apply(manifest: Manifest, force: boolean): Promise<ListedObject> {
    const what = `apply ${manifest.kind} ${manifest.metadata.name}`;
    return this.call<unknown>(what, manifest.kind, 'patch', async (options) => {
      const request = {
        name: manifest.metadata.name,
        namespace: this.namespace,
        body: manifest,
        fieldManager: FIELD_MANAGER,
        fieldValidation: 'Strict',
        force,
      };
      switch (manifest.kind) {
        case 'Deployment':
          return this.apis.apps.patchNamespacedDeployment(request, options);
        case 'Service':
          return this.apis.core.patchNamespacedService(request, options);
        case 'Secret':
          return this.apis.core.patchNamespacedSecret(request, options);
        case 'NetworkPolicy':
          return this.apis.networking.patchNamespacedNetworkPolicy(request, options);
      }
    }) as Promise<ListedObject>;
  }

  /** The objects of `kind` matching `labelSelector`, and the list's resource version (for a watch). */
  async list(
    kind: ManagedKind,
    labelSelector: string,
  ): Promise<{ items: ListedObject[]; resourceVersion: string }> {
    const list = (await this.call<unknown>(`list ${kind}s`, kind, 'list', (options) => {
      const request = { namespace: this.namespace, labelSelector };
      switch (kind) {
        case 'Deployment':
          return this.apis.apps.listNamespacedDeployment(request, options);
        case 'Service':
          return this.apis.core.listNamespacedService(request, options);
        case 'Secret':
          return this.apis.core.listNamespacedSecret(request, options);
        case 'NetworkPolicy':
          return this.apis.networking.listNamespacedNetworkPolicy(request, options);
      }
    })) as { items?: ListedObject[]; metadata?: { resourceVersion?: string } };
    return {
      items: (list.items ?? []).filter((o) => o.metadata?.name),
      resourceVersion: list.metadata?.resourceVersion ?? '',
    };
  }

  /** Deletes an object; one already gone is not an error. */
  async delete(kind: ManagedKind, name: string): Promise<void> {
    try {
      await this.call<unknown>(`delete ${kind} ${name}`, kind, 'delete', (options) => {
        const request = { name, namespace: this.namespace, propagationPolicy: 'Background' };
        switch (kind) {
          case 'Deployment':
            return this.apis.apps.deleteNamespacedDeployment(request, options);
          case 'Service':
            return this.apis.core.deleteNamespacedService(request, options);
          case 'Secret':
            return this.apis.core.deleteNamespacedSecret(request, options);
          case 'NetworkPolicy':
            return this.apis.networking.deleteNamespacedNetworkPolicy(request, options);
        }
      });
    } catch (err) {
      if (err instanceof ClusterError && err.status === 404) return;
      throw err;
    }
  }

  /**
   * Watches Deployments matching `labelSelector` from `resourceVersion` for at most
   * `timeoutSeconds`; `onEvent` gets each added or modified object. Resolves when the watch ends
   * (its time, `signal`, or the server closing it); rejects with a {@link ClusterError} when it
   * could not start or broke (a 410 `Expired` resource version included: list again).
   */
  watchDeployments(
    labelSelector: string,
    resourceVersion: string,
    timeoutSeconds: number,
    onEvent: (object: ListedObject) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let controller: AbortController | undefined;
      let settled = false;
      const finish = (err: unknown) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', stop);
        if (err && !signal.aborted) reject(this.failure('watch Deployments', 'Deployment', 'watch', err));
        else resolve();
      };
      const stop = () => {
        controller?.abort();
        finish(null);
      };
      signal.addEventListener('abort', stop, { once: true });
      this.apis.watch
        .watch(
          COLLECTION.Deployment(this.namespace),
          { labelSelector, resourceVersion, timeoutSeconds, allowWatchBookmarks: false },
          (type, object: ListedObject & { code?: number; reason?: string }) => {
            if (type === 'ERROR') {
              finish(Object.assign(new Error(object.reason ?? 'watch error'), { code: object.code }));
              controller?.abort();
            } else if (type === 'ADDED' || type === 'MODIFIED') {
              onEvent(object);
            }
          },
          (err: unknown) => finish(err),
        )
        .then((c) => {
          controller = c;
          if (settled || signal.aborted) c.abort();
        })
        .catch(finish);
    });
  }

  /** Runs one call with the deadline; maps what fails. */
  private async call<T>(
    what: string,
    kind: ManagedKind,
    verb: string,
    work: (options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    const middleware: Middleware = {
      pre: (context) => {
        context.setSignal(controller.signal);
        if (verb === 'patch') context.setHeaderParam('Content-Type', 'application/apply-patch+yaml');
        return new this.apis.observable(Promise.resolve(context));
      },
      post: (response) => new this.apis.observable(Promise.resolve(response)),
    };
    try {
      return await work({ middleware: [middleware], middlewareMergeStrategy: 'append' });
    } catch (err) {
      if (controller.signal.aborted) {
        throw new ClusterError(
          'unreachable',
          `The Kubernetes API did not answer within ${this.timeoutMs} ms (${what})`,
        );
      }
      throw this.failure(what, kind, verb, err);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(what: string, kind: ManagedKind, verb: string, err: unknown): ClusterError {
    const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: string };
    const status =
      typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined;
    if (status === undefined) {
      const code = typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code) ? e.code : 'network error';
      return new ClusterError('unreachable', `The Kubernetes API could not be reached to ${what} (${code})`);
    }
    // A Secret's refusal may quote what was sent: its reason is left out.
    const reason = kind === 'Secret' ? null : apiReason(e.body);
    const ns = `namespace "${this.namespace}"`;
    if (status === 401) {
      return new ClusterError(
        'forbidden',
        `The Kubernetes API refused this service's credentials (401) to ${what}`,
        status,
      );
    }
    if (status === 403) {
      return new ClusterError(
        'forbidden',
        `The Kubernetes API denied ${what} in ${ns} (403 Forbidden): the service account needs ${verb === 'patch' ? 'patch and create' : verb} on ${RESOURCE[kind]}`,
        status,
      );
    }
    if (status === 409) {
      return new ClusterError(
        'conflict',
        `${kind} ${what.split(' ').pop()} in ${ns} is managed by someone else${reason ? ` (${reason})` : ''}; ` +
          'this service does not take over objects it did not make: rename or delete it',
        status,
      );
    }
    if (status === 400 || status === 422) {
      return new ClusterError(
        'invalid',
        `The Kubernetes API refused to ${what} (${status}${reason ? `: ${reason}` : ''})`,
        status,
      );
    }
    if (status === 429 || status >= 500) {
      return new ClusterError(
        'unreachable',
        `The Kubernetes API is overloaded or failing (${status}) to ${what}`,
        status,
      );
    }
    return new ClusterError(
      'failed',
      `The Kubernetes API failed to ${what} (${status}${reason ? `: ${reason}` : ''})`,
      status,
    );
  }
}

/** The `message` of a Kubernetes `Status` body, trimmed; never the body itself. */
function apiReason(body: unknown): string | null {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return null;
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 300) : null;
}
