import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A loopback stand-in for the Kubernetes API server, the subset the runtime adapter uses, with
 * the API server's semantics:
 *
 * - `GET /api/v1/namespaces/{ns}/pods?labelSelector=...`: a `PodList` of the namespace's pods
 *   matching the selector (`k=v`, `k!=v`, `k in (a,b)`, `k`, joined by commas);
 * - `GET /api/v1/namespaces/{ns}/pods/{name}/log?container&tailLines&timestamps&sinceTime&limitBytes`:
 *   the container's lines as `text/plain`, each `<RFC 3339 nanoseconds> <message>` with
 *   `timestamps=true`; `sinceTime` keeps lines at or after it, `tailLines` the last N of those,
 *   `limitBytes` cuts the text; 404 for an unknown pod, 400 for a container the pod lacks (or none
 *   named when it has several) or one that has not started;
 * - a bearer token checked on every request (401 `Status` otherwise).
 *
 * ```ts
 * const fake = await startKubernetesFake();
 * fake.pods.push(fakePod('api-0', { deployment: '7', source: 'production' }, { 'cubejs-server': [...] }));
 * const t = await startApp(fake.env());
 * ```
 */

export interface FakePodSpec {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** App containers, in order, each with its log as [RFC 3339 instant, message] pairs. */
  containers: Array<{ name: string; log: Array<[string, string]>; started?: boolean; restarts?: number }>;
  initContainers?: Array<{ name: string; log: Array<[string, string]> }>;
  phase?: string;
  ready?: boolean;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Whether the request carried the right bearer token, a wrong one, or none. */
  auth: 'ok' | 'wrong' | 'none';
}

/** Knobs a test turns to make the API server misbehave. */
export interface FakeSettings {
  /** Answer every request with this status (and a `Status` body) instead of serving it. */
  failWith: number | null;
  /** Never answer (the connection stays open until the fake closes). */
  hang: boolean;
}

export interface KubernetesFake {
  url: string;
  token: string;
  pods: FakePodSpec[];
  requests: FakeRequest[];
  settings: FakeSettings;
  /** Writes a kubeconfig pointing at the fake (or at `server`) and returns its path. */
  kubeconfig(options?: {
    namespace?: string;
    token?: string;
    server?: string;
    skipTlsVerify?: boolean;
  }): string;
  /** Settings for `startApp`: the Kubernetes runtime through a kubeconfig of the fake. */
  env(options?: { namespace?: string; timeoutMs?: number }): Record<string, string>;
  reset(): void;
  close(): Promise<void>;
}

export const NAMESPACE = 'analytics';

/** A pod of the default namespace with running containers; `log` lines per container name. */
export function fakePod(
  name: string,
  labels: Record<string, string>,
  logs: Record<string, Array<[string, string]>>,
  extra: Partial<FakePodSpec> = {},
): FakePodSpec {
  return {
    name,
    namespace: NAMESPACE,
    labels,
    containers: Object.entries(logs).map(([container, log]) => ({ name: container, log })),
    ...extra,
  };
}

/** An instant as the kubelet writes it: RFC 3339 in UTC with nine fractional digits. */
export function kubeletTime(iso: string, nanos = 0): string {
  const d = new Date(iso);
  const fraction = String(d.getUTCMilliseconds() * 1_000_000 + nanos).padStart(9, '0');
  return `${d.toISOString().slice(0, 19)}.${fraction}Z`;
}

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** Whether `labels` match a label selector of equality and set requirements. */
function matches(selector: string, labels: Record<string, string>): boolean {
  const requirements = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return requirements.every((raw) => {
    const r = raw.trim();
    let m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(r);
    if (m) {
      const values = m[3].split(',').map((v) => v.trim());
      const has = m[1] in labels && values.includes(labels[m[1]]);
      return m[2] === 'in' ? has : !has;
    }
    m = /^([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)$/.exec(r);
    if (m) return m[2] === '!=' ? labels[m[1]] !== m[3] : labels[m[1]] === m[3];
    m = /^(!?)([\w./-]+)$/.exec(r);
    if (m) return m[1] === '!' ? !(m[2] in labels) : m[2] in labels;
    throw new Error(`unsupported selector ${r}`);
  });
}

function toPod(p: FakePodSpec): Record<string, unknown> {
  const statuses = (list: FakePodSpec['containers']) =>
    list.map((c) => ({
      name: c.name,
      ready: c.started !== false,
      restartCount: c.restarts ?? 0,
      image: `${c.name}:latest`,
      imageID: '',
      state:
        c.started === false
          ? { waiting: { reason: 'ContainerCreating' } }
          : { running: { startedAt: '2026-01-01T00:00:00Z' } },
    }));
  return {
    metadata: { name: p.name, namespace: p.namespace, labels: p.labels, uid: `uid-${p.name}` },
    spec: {
      containers: p.containers.map((c) => ({ name: c.name, image: `${c.name}:latest` })),
      ...(p.initContainers
        ? { initContainers: p.initContainers.map((c) => ({ name: c.name, image: 'init' })) }
        : {}),
    },
    status: {
      phase: p.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True' }],
      containerStatuses: statuses(p.containers),
      ...(p.initContainers
        ? {
            initContainerStatuses: p.initContainers.map((c) => ({
              name: c.name,
              ready: false,
              restartCount: 0,
              image: 'init',
              imageID: '',
              state: { terminated: { exitCode: 0, reason: 'Completed' } },
            })),
          }
        : {}),
    },
  };
}

export async function startKubernetesFake(): Promise<KubernetesFake> {
  const token = `k8s-${randomBytes(16).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
  const sockets = new Set<Socket>();
  const state = {
    pods: [] as FakePodSpec[],
    requests: [] as FakeRequest[],
    settings: { failWith: null, hang: false } as FakeSettings,
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const header = req.headers.authorization;
    const auth: FakeRequest['auth'] = !header ? 'none' : header === `Bearer ${token}` ? 'ok' : 'wrong';
    state.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      auth,
    });
    if (state.settings.hang) return;
    const send = (code: number, body: string, type = 'application/json') => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    const fail = (code: number, message: string) =>
      send(code, status(code, REASONS[code] ?? 'Unknown', message));
    if (state.settings.failWith !== null) return fail(state.settings.failWith, 'injected failure');
    if (auth !== 'ok') return fail(401, 'Unauthorized');
    if (req.method !== 'GET') return fail(405, 'method not allowed');

    let m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname);
    if (m) {
      const selector = url.searchParams.get('labelSelector') ?? '';
      const items = state.pods
        .filter((p) => p.namespace === m![1] && (selector === '' || matches(selector, p.labels)))
        .map(toPod);
      return send(200, JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items }));
    }
    m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname);
    if (m) {
      const pod = state.pods.find((p) => p.namespace === m[1] && p.name === m[2]);
      if (!pod) return fail(404, `pods "${m[2]}" not found`);
      const all = [...pod.containers, ...(pod.initContainers ?? [])];
      const name =
        url.searchParams.get('container') ?? (pod.containers.length === 1 ? pod.containers[0].name : null);
      if (!name) return fail(400, `a container name must be specified for pod ${pod.name}`);
      const container = all.find((c) => c.name === name);
      if (!container) return fail(400, `container ${name} is not valid for pod ${pod.name}`);
      if ('started' in container && container.started === false) {
        return fail(400, `container "${name}" in pod "${pod.name}" is waiting to start: ContainerCreating`);
      }
      const since = url.searchParams.get('sinceTime');
      if (since !== null && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(since)) {
        return fail(400, `sinceTime: invalid value ${since}`);
      }
      let lines = container.log.filter(([at]) => since === null || Date.parse(at) >= Date.parse(since));
      const tail = url.searchParams.get('tailLines');
      if (tail !== null) lines = Number(tail) === 0 ? [] : lines.slice(-Number(tail));
      const timestamps = url.searchParams.get('timestamps') === 'true';
      let text = lines.map(([at, message]) => `${timestamps ? `${at} ` : ''}${message}\n`).join('');
      const limit = url.searchParams.get('limitBytes');
      if (limit !== null) text = Buffer.from(text).subarray(0, Number(limit)).toString();
      return send(200, text, 'text/plain');
    }
    fail(404, 'the server could not find the requested resource');
  };

  const server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let files = 0;

  const fake: KubernetesFake = {
    url,
    token,
    get pods() {
      return state.pods;
    },
    set pods(value) {
      state.pods = value;
    },
    get requests() {
      return state.requests;
    },
    set requests(value) {
      state.requests = value;
    },
    settings: state.settings,
    kubeconfig(options = {}) {
      files += 1;
      const file = path.join(dir, `config-${files}`);
      const skip = options.skipTlsVerify ? '\n    insecure-skip-tls-verify: true' : '';
      fs.writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: fake',
          '  cluster:',
          `    server: ${options.server ?? url}${skip}`,
          'users:',
          '- name: fake-user',
          '  user:',
          `    token: ${options.token ?? token}`,
          'contexts:',
          '- name: fake',
          '  context:',
          '    cluster: fake',
          '    user: fake-user',
          ...(options.namespace === undefined ? [] : [`    namespace: ${options.namespace}`]),
          'current-context: fake',
          '',
        ].join('\n'),
      );
      return file;
    },
    env(options = {}) {
      return {
        DEPLOYMENT_RUNTIME: 'kubernetes',
        KUBECONFIG: fake.kubeconfig({ namespace: options.namespace ?? NAMESPACE }),
        ...(options.timeoutMs !== undefined
          ? { DEPLOYMENT_RUNTIME_TIMEOUT_MS: String(options.timeoutMs) }
          : {}),
      };
    },
    reset() {
      state.settings.failWith = null;
      state.settings.hang = false;
      state.requests = [];
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return fake;
}
