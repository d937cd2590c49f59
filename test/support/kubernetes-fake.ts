import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isAtomicMap, manifestProblems, type ManifestProblem } from './kubernetes-schemas.js';

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
 * - Deployments (`/apis/apps/v1/namespaces/{ns}/deployments[/{name}[/status]]`), Services and
 *   Secrets (`/api/v1/namespaces/{ns}/services|secrets[/{name}]`) and NetworkPolicies
 *   (`/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies[/{name}]`), written by
 *   server-side apply only (`PATCH` with `Content-Type: application/apply-patch+yaml`), read one
 *   by one or listed (`labelSelector`, `fieldSelector`), watched (`?watch=true`) and deleted; see
 *   `applyObject`, `serveWatch` and `setRollout` below for the details of each;
 * - a bearer token checked on every request (401 `Status` otherwise), and RBAC refusals a test
 *   turns on (`settings.deny`: 403 with the API server's message).
 *
 * ```ts
 * const fake = await startKubernetesFake();
 * fake.pods.push(fakePod('api-0', { deployment: '7', source: 'production' }, { 'cubejs-server': [...] }));
 * const t = await startApp(fake.env());
 * // ... the service applies cube-7; the deployment controller's part is the test's:
 * fake.setRollout('cube-7', 'available');
 * expect(fake.invalid).toEqual([]);
 * ```
 *
 * What it does not do: create (`POST`), replace (`PUT`) and the other patch types (JSON, merge,
 * strategic merge: 415); `limit`/`continue` paging (lists are whole); `sendInitialEvents`;
 * foreground deletion (objects go at once; only `Orphan` keeps a Deployment's pods).
 */

export interface FakePodSpec {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** App containers, in order, each with its log as [RFC 3339 instant, message] pairs. */
  containers: Array<{
    name: string;
    log: Array<[string, string]>;
    started?: boolean;
    restarts?: number;
    /** The image (`<name>:latest` when absent). */
    image?: string;
  }>;
  initContainers?: Array<{ name: string; log: Array<[string, string]>; image?: string }>;
  phase?: string;
  ready?: boolean;
  /** The ReplicaSet (`<deployment>-<pod-template-hash>`) that made it, for the pods of a Deployment. */
  replicaSet?: string;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Whether the request carried the right bearer token, a wrong one, or none. */
  auth: 'ok' | 'wrong' | 'none';
  /** For writes (any method but GET): the `Content-Type` header, without parameters. */
  contentType?: string;
  /** For writes: the body parsed (JSON, or YAML for apply patches), its text when it does not parse. */
  body?: unknown;
}

/** The kinds the fake stores. */
export type FakeKind = 'Deployment' | 'Service' | 'Secret' | 'NetworkPolicy';
export type FakeResource = 'deployments' | 'services' | 'secrets' | 'networkpolicies';
export type FakeVerb = 'get' | 'list' | 'watch' | 'create' | 'patch' | 'delete';

/** An RBAC rule the service account lacks: requests needing it get the API server's 403. */
export interface FakeDenial {
  verb: FakeVerb;
  resource: FakeResource | 'pods' | 'pods/log';
  /** Only in this namespace (every namespace when absent). */
  namespace?: string;
  /** Only for this object's name (every name when absent). */
  name?: string;
}

/** Knobs a test turns to make the API server misbehave. */
export interface FakeSettings {
  /** Answer every request with this status (and a `Status` body) instead of serving it. */
  failWith: number | null;
  /** Never answer (the connection stays open until the fake closes). */
  hang: boolean;
  /** Permissions the caller lacks (403 `Forbidden`). */
  deny: FakeDenial[];
  /** The user the 403 messages name. */
  user: string;
}

/** An apply the fake refused as invalid (422), as a test asserts there are none. */
export interface FakeInvalidApply {
  kind: string;
  namespace: string;
  name: string;
  fieldManager: string;
  /** `<field>: <problem>`, as `validateManifest` words them. */
  problems: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects as JSON of any shape
export type KubeObject = Record<string, any>;

/** What an apply answered: the HTTP status and the object, or a `Status` when it failed. */
export interface FakeApplyResult {
  code: number;
  body: KubeObject;
}

export type FakeRolloutState = 'progressing' | 'available' | 'failed';

export interface KubernetesFake {
  url: string;
  token: string;
  pods: FakePodSpec[];
  requests: FakeRequest[];
  /** Applies refused as invalid (422) through HTTP; a test asserts it stays empty. */
  invalid: FakeInvalidApply[];
  settings: FakeSettings;
  /** Writes a kubeconfig pointing at the fake (or at `server`) and returns its path. */
  kubeconfig(options?: {
    namespace?: string;
    token?: string;
    server?: string;
    skipTlsVerify?: boolean;
  }): string;
  /**
   * Settings for `startApp`: the Kubernetes runtime through a kubeconfig of the fake, and the
   * address the deployments' pods would reach this service at (required with that runtime).
   */
  env(options?: { namespace?: string; timeoutMs?: number; platformUrl?: string }): Record<string, string>;
  /**
   * A server-side apply by another field manager (`kubectl`, an operator), as a PATCH would do
   * it, without RBAC, injected failures or `invalid` records: to create drift and conflicts.
   * The namespace is the manifest's, else `options.namespace`, else `NAMESPACE`.
   */
  applyAs(
    fieldManager: string,
    manifest: KubeObject,
    options?: { force?: boolean; namespace?: string },
  ): FakeApplyResult;
  /**
   * Moves a Deployment's rollout as the deployment controller would (status and, once
   * available, its pods) and emits the MODIFIED watch event. Throws for an unknown Deployment.
   */
  setRollout(
    name: string,
    state: FakeRolloutState,
    options?: { namespace?: string; message?: string; replicaFailure?: string },
  ): KubeObject;
  /** The stored objects (copies), of one kind or all, by namespace then name. */
  objects(kind?: FakeKind): KubeObject[];
  /** One stored object (a copy) as a GET would return it, or undefined. */
  get(kind: FakeKind, name: string, namespace?: string): KubeObject | undefined;
  /** Open watches, of one kind or all (to wait until the service's watch is established). */
  watchers(kind?: FakeKind): number;
  /** Sends a BOOKMARK event to the open watches that allowed them. */
  bookmark(): void;
  /** Forgets the event history, as etcd compaction does: older watches get 410 Expired. */
  compact(): void;
  /** The latest resourceVersion, as a list's `metadata.resourceVersion`. */
  resourceVersion(): string;
  /** Clears the settings and the records (`requests`, `invalid`), not the stored objects. */
  reset(): void;
  /** Deletes every stored object and the pods of Deployments, and forgets the event history. */
  clear(): void;
  close(): Promise<void>;
}

export const NAMESPACE = 'analytics';
/** `KUBERNETES_PLATFORM_URL` in `env()`: this service as the pods of a cluster would reach it. */
export const PLATFORM_URL = 'http://analytics-platform-api.analytics.svc:3000';
/** The user named in 403 messages unless a test sets `settings.user`. */
export const FAKE_USER = 'system:serviceaccount:analytics:platform';

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

/** A `Status` object, the body of every refusal of the API server. */
function statusObject(code: number, reason: string, message: string, details?: KubeObject): KubeObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

function status(code: number, reason: string, message: string): string {
  return JSON.stringify(statusObject(code, reason, message));
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
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

/** A `fieldSelector` as a predicate; the API server knows `metadata.name` and `metadata.namespace`. */
function fieldMatcher(selector: string): (o: KubeObject) => boolean {
  const tests = selector
    .split(',')
    .filter((r) => r.trim() !== '')
    .map((raw) => {
      const m = /^\s*([\w.]+)\s*(!=|==|=)\s*(.*?)\s*$/.exec(raw);
      if (!m) throw new Error(`invalid field selector: ${raw}`);
      const [, field, op, value] = m;
      if (field !== 'metadata.name' && field !== 'metadata.namespace') {
        throw new Error(
          `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
        );
      }
      const key = field === 'metadata.name' ? 'name' : 'namespace';
      return (o: KubeObject) => (op === '!=' ? o.metadata[key] !== value : o.metadata[key] === value);
    });
  return (o) => tests.every((t) => t(o));
}

function toPod(p: FakePodSpec): Record<string, unknown> {
  const statuses = (list: FakePodSpec['containers']) =>
    list.map((c) => ({
      name: c.name,
      ready: c.started !== false,
      restartCount: c.restarts ?? 0,
      image: c.image ?? `${c.name}:latest`,
      imageID: '',
      state:
        c.started === false
          ? { waiting: { reason: 'ContainerCreating' } }
          : { running: { startedAt: '2026-01-01T00:00:00Z' } },
    }));
  return {
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: p.labels,
      uid: `uid-${p.name}`,
      ...(p.replicaSet
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: p.replicaSet,
                uid: `uid-${p.replicaSet}`,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers: p.containers.map((c) => ({ name: c.name, image: c.image ?? `${c.name}:latest` })),
      ...(p.initContainers
        ? { initContainers: p.initContainers.map((c) => ({ name: c.name, image: c.image ?? 'init' })) }
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
              image: c.image ?? 'init',
              imageID: '',
              state: { terminated: { exitCode: 0, reason: 'Completed' } },
            })),
          }
        : {}),
    },
  };
}

// --- The stored kinds ---

interface ResourceType {
  kind: FakeKind;
  resource: FakeResource;
  group: string;
  apiVersion: string;
  /** How the API server's messages name the resource: `deployments.apps`, `secrets`. */
  qualified: string;
  /** Whether the kind keeps `metadata.generation` (bumped when `spec` changes). */
  generation: boolean;
}

const TYPES: ResourceType[] = [
  {
    kind: 'Deployment',
    resource: 'deployments',
    group: 'apps',
    apiVersion: 'apps/v1',
    qualified: 'deployments.apps',
    generation: true,
  },
  {
    kind: 'Service',
    resource: 'services',
    group: '',
    apiVersion: 'v1',
    qualified: 'services',
    generation: false,
  },
  {
    kind: 'Secret',
    resource: 'secrets',
    group: '',
    apiVersion: 'v1',
    qualified: 'secrets',
    generation: false,
  },
  {
    kind: 'NetworkPolicy',
    resource: 'networkpolicies',
    group: 'networking.k8s.io',
    apiVersion: 'networking.k8s.io/v1',
    qualified: 'networkpolicies.networking.k8s.io',
    generation: true,
  },
];
const typeOfKind = (kind: string) => TYPES.find((t) => t.kind === kind);

const APPLY_PATCH = 'application/apply-patch+yaml';
const HISTORY = 1000;

/** One field manager's share of an object: the leaf paths of its last applied configuration. */
interface Ownership {
  paths: Set<string>;
  apiVersion: string;
  time: string;
}

interface Stored {
  type: ResourceType;
  /** The live object, with `kind` and `apiVersion`; `metadata.managedFields` rendered from `owners`. */
  object: KubeObject;
  /** Field managers by name, in the order they first applied. */
  owners: Map<string, Ownership>;
  /** When the deployment controller last wrote the status (its `Update` entry in managedFields). */
  statusTime?: string;
}

interface WatchEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  /** The object before a MODIFIED event, to tell a watch whose selector it left or entered. */
  previous?: KubeObject;
}

interface Watcher {
  type: ResourceType;
  namespace: string;
  selects: (o: KubeObject) => boolean;
  bookmarks: boolean;
  res: ServerResponse;
  timer?: NodeJS.Timeout;
}

const isObject = (v: unknown): v is KubeObject => !!v && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
/** Equality of JSON values (whatever realm made the objects: Jest runs tests in a VM context). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  return (
    keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length &&
    keys.every((k) => sameJson(a[k], b[k]))
  );
}
/** Kubernetes' `metav1.Time`: RFC 3339, whole seconds. */
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

// --- Field paths and ownership (server-side apply, simplified) ---
//
// A path is the list of field names from the object's root; a manager owns the leaf paths of the
// configuration it last applied. Objects (maps and structs) are walked into, so `metadata.labels`
// keys, `data` keys and `spec` fields are owned one by one; every list is one leaf (an atomic
// list, like `x-kubernetes-list-type: atomic`: `containers`, `env`, `ports`, `volumes` and the
// NetworkPolicy rules are owned and replaced whole), and so is every map or struct Kubernetes'
// schema marks `x-kubernetes-map-type: atomic` (label selectors, a Service's `selector`, a
// `secretKeyRef`); an empty object (`emptyDir: {}`) is a leaf that only asks for the object to
// be there.

type FieldPath = string[];
const pathKey = (p: FieldPath) => JSON.stringify(p);
const pathOf = (key: string) => JSON.parse(key) as FieldPath;
/** As the API server writes a field in conflict messages: `.spec.replicas`. */
const showPath = (p: FieldPath) => p.map((s) => `.${s}`).join('');

/** The leaf paths of a configuration; `atomic` tells the maps the schema marks atomic. */
function leafPaths(
  value: KubeObject,
  atomic: (p: FieldPath) => boolean = () => false,
  prefix: FieldPath = [],
): FieldPath[] {
  const out: FieldPath[] = [];
  for (const [k, v] of Object.entries(value)) {
    const p = [...prefix, k];
    if (isObject(v) && Object.keys(v).length > 0 && !atomic(p)) out.push(...leafPaths(v, atomic, p));
    else out.push(p);
  }
  return out;
}

const isPrefix = (a: FieldPath, b: FieldPath) => a.length <= b.length && a.every((s, i) => s === b[i]);
const overlaps = (a: FieldPath, b: FieldPath) => isPrefix(a, b) || isPrefix(b, a);

function getAt(o: unknown, p: FieldPath): unknown {
  let node = o;
  for (const s of p) {
    if (!isObject(node)) return undefined;
    node = node[s];
  }
  return node;
}

function setAt(o: KubeObject, p: FieldPath, value: unknown) {
  let node = o;
  for (const s of p.slice(0, -1)) {
    if (!isObject(node[s])) node[s] = {};
    node = node[s];
  }
  node[p[p.length - 1]] = value;
}

/** Removes the field, then the objects it leaves empty below the top-level field. */
function deleteAt(o: KubeObject, p: FieldPath) {
  const parents: KubeObject[] = [o];
  for (const s of p.slice(0, -1)) {
    const next = parents[parents.length - 1][s];
    if (!isObject(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1][p[p.length - 1]];
  for (let i = parents.length - 1; i >= 2; i--) {
    if (Object.keys(parents[i]).length > 0) break;
    delete parents[i - 1][p[i - 1]];
  }
}

/** `metadata.managedFields[].fieldsV1`, simplified: `f:<field>` nested, `{}` at the leaves. */
function fieldsV1(paths: Iterable<FieldPath>): KubeObject {
  const root: KubeObject = {};
  for (const p of paths) {
    let node = root;
    for (const s of p) node = node[`f:${s}`] ??= {};
  }
  return root;
}

/** Server-set metadata, which an applied configuration never owns. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

// --- Defaulting: the fields the API server fills in when a manifest leaves them out (a subset) ---

function defaultContainers(list: unknown) {
  if (!Array.isArray(list)) return;
  for (const c of list) {
    if (!isObject(c)) continue;
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    const image = typeof c.image === 'string' ? c.image : '';
    const tag = /:([^:/]+)$/.exec(image.split('@')[0])?.[1];
    if (!image.includes('@')) c.imagePullPolicy ??= !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
    else c.imagePullPolicy ??= 'IfNotPresent';
    c.resources ??= {};
    for (const port of Array.isArray(c.ports) ? c.ports : []) if (isObject(port)) port.protocol ??= 'TCP';
    for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      if (!isObject(probe)) continue;
      if (isObject(probe.httpGet)) probe.httpGet.scheme ??= 'HTTP';
      probe.timeoutSeconds ??= 1;
      probe.periodSeconds ??= 10;
      probe.successThreshold ??= 1;
      probe.failureThreshold ??= 3;
    }
  }
}

let clusterIPs = 0;

function applyDefaults(type: ResourceType, o: KubeObject) {
  if (type.kind === 'Secret') o.type ??= 'Opaque';
  if (type.kind === 'Secret') return;
  const spec = isObject(o.spec) ? o.spec : (o.spec = {});
  if (type.kind === 'Deployment') {
    spec.replicas ??= 1;
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    spec.strategy ??= {};
    spec.strategy.type ??= 'RollingUpdate';
    if (spec.strategy.type === 'RollingUpdate') {
      spec.strategy.rollingUpdate ??= {};
      spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
      spec.strategy.rollingUpdate.maxSurge ??= '25%';
    }
    const pod = getAt(spec, ['template', 'spec']);
    if (isObject(pod)) {
      pod.restartPolicy ??= 'Always';
      pod.dnsPolicy ??= 'ClusterFirst';
      pod.terminationGracePeriodSeconds ??= 30;
      pod.schedulerName ??= 'default-scheduler';
      pod.securityContext ??= {};
      defaultContainers(pod.containers);
      defaultContainers(pod.initContainers);
    }
  } else if (type.kind === 'Service') {
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
      clusterIPs += 1;
      spec.clusterIP = `10.96.${Math.floor(clusterIPs / 250) % 250}.${(clusterIPs % 250) + 2}`;
    }
    if (typeof spec.clusterIP === 'string') spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
    for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
      if (!isObject(port)) continue;
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
    }
  } else if (type.kind === 'NetworkPolicy') {
    spec.policyTypes ??= [
      'Ingress',
      ...(Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Egress'] : []),
    ];
    const rules: unknown[] = [spec.ingress, spec.egress].flatMap((r) => (Array.isArray(r) ? r : []));
    for (const rule of rules) {
      for (const port of isObject(rule) && Array.isArray(rule.ports) ? rule.ports : []) {
        if (isObject(port)) port.protocol ??= 'TCP';
      }
    }
  }
}

/** The pod-template-hash of a template, in the deployment controller's alphabet. */
function templateHash(template: unknown): string {
  const n = createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest()
    .readUInt32BE(0);
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...String(n)].map((c) => alphabet[c.charCodeAt(0) % alphabet.length]).join('');
}

export async function startKubernetesFake(): Promise<KubernetesFake> {
  const token = `k8s-${randomBytes(16).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
  const sockets = new Set<Socket>();
  const state = {
    pods: [] as FakePodSpec[],
    requests: [] as FakeRequest[],
    invalid: [] as FakeInvalidApply[],
    settings: { failWith: null, hang: false, deny: [], user: FAKE_USER } as FakeSettings,
  };
  /** Stored objects by `<resource>/<namespace>/<name>`. */
  const store = new Map<string, Stored>();
  /** One resourceVersion counter for every object, as etcd's revision. */
  let revision = 1;
  /** Per resource: the events kept for watches from a resourceVersion, and the last one forgotten. */
  const history = new Map<FakeResource, WatchEvent[]>(TYPES.map((t) => [t.resource, []]));
  const compacted = new Map<FakeResource, number>(TYPES.map((t) => [t.resource, 0]));
  const watchers = new Set<Watcher>();

  const keyOf = (type: ResourceType, namespace: string, name: string) =>
    `${type.resource}/${namespace}/${name}`;

  /** The object as a GET returns it: `managedFields` rendered, `kind` and `apiVersion` set. */
  function render(stored: Stored): KubeObject {
    const o = clone(stored.object);
    const entries: KubeObject[] = [...stored.owners].map(([manager, own]) => ({
      manager,
      operation: 'Apply',
      apiVersion: own.apiVersion,
      time: own.time,
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1([...own.paths].map(pathOf)),
    }));
    if (stored.statusTime) {
      entries.push({
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: stored.type.apiVersion,
        time: stored.statusTime,
        fieldsType: 'FieldsV1',
        fieldsV1: fieldsV1(leafPaths({ status: o.status ?? {} })),
        subresource: 'status',
      });
    }
    o.metadata.managedFields = entries;
    return { apiVersion: stored.type.apiVersion, kind: stored.type.kind, ...o };
  }

  /** Records an event for watches (history and the open ones). */
  function publish(type: ResourceType, event: Omit<WatchEvent, 'rv'>) {
    const e: WatchEvent = { ...event, rv: Number(event.object.metadata.resourceVersion) };
    const list = history.get(type.resource)!;
    list.push(e);
    if (list.length > HISTORY) compacted.set(type.resource, list.shift()!.rv);
    for (const w of watchers) if (w.type === type) deliver(w, e);
  }

  /**
   * Writes an event to a watch as the watch cache does: only objects its selectors match, a
   * MODIFIED object that starts matching as ADDED and one that stops as DELETED.
   */
  function deliver(w: Watcher, e: WatchEvent) {
    if (e.object.metadata.namespace !== w.namespace) return;
    const selected = w.selects(e.object);
    let type: string = e.type;
    if (e.type === 'MODIFIED') {
      const before = e.previous ? w.selects(e.previous) : false;
      if (selected && !before) type = 'ADDED';
      else if (!selected && before) type = 'DELETED';
      else if (!selected) return;
    } else if (!selected) return;
    w.res.write(`${JSON.stringify({ type, object: e.object })}\n`);
  }

  function endWatch(w: Watcher) {
    if (w.timer) clearTimeout(w.timer);
    watchers.delete(w);
    w.res.end();
  }

  /** Stores a new state of an object: next resourceVersion, and the watch event. */
  function commit(stored: Stored, type: 'ADDED' | 'MODIFIED', previous?: KubeObject): KubeObject {
    revision += 1;
    stored.object.metadata.resourceVersion = String(revision);
    store.set(keyOf(stored.type, stored.object.metadata.namespace, stored.object.metadata.name), stored);
    const rendered = render(stored);
    publish(stored.type, { type, object: rendered, previous });
    return rendered;
  }

  /** The pods of a Deployment's ReplicaSets (`<deployment>-<hash>`; the hash has no `-`). */
  function deploymentPods(namespace: string, name: string) {
    return state.pods.filter(
      (p) =>
        p.namespace === namespace &&
        p.replicaSet !== undefined &&
        p.replicaSet.slice(0, p.replicaSet.lastIndexOf('-')) === name,
    );
  }

  function removePods(namespace: string, name: string) {
    const gone = new Set(deploymentPods(namespace, name));
    state.pods = state.pods.filter((p) => !gone.has(p));
  }

  /**
   * Server-side apply (`PATCH` with `application/apply-patch+yaml`), as the API server's field
   * manager does it, simplified (see "Field paths and ownership" above):
   *
   * - the body's apiVersion, kind, name and namespace must be the URL's (400), and
   *   `metadata.managedFields` must be absent (400); `metadata.resourceVersion`, when set, must
   *   be the live one (409, the optimistic-concurrency precondition);
   * - the live object becomes: the previous one, less the fields this manager owned and no
   *   longer applies (unless another manager owns them too), with the applied configuration
   *   merged in, then the defaults the API server fills in; `status` in the body is ignored (a
   *   subresource), a Secret's `stringData` is merged into `data` (base64) and never kept;
   * - it is checked with `manifestProblems` (Kubernetes' schema for the kind, unknown fields
   *   refused as `fieldValidation=Strict`, names and labels) and for immutable fields (a
   *   Deployment's `spec.selector`, an immutable Secret's data): 422 `Invalid`;
   * - changing a field another manager owns to another value is a conflict: 409 with one
   *   `FieldManagerConflict` cause per field, and nothing changes; with `force` the applier
   *   takes the fields over. Setting a field to the value it has shares its ownership;
   * - the applier then owns exactly the leaf paths of this configuration;
   * - 201 with the object when it was created, 200 when updated; an apply that changes nothing
   *   (object and ownership) writes nothing: same resourceVersion, no watch event;
   * - `uid`, `creationTimestamp`, `resourceVersion` and (Deployments and NetworkPolicies)
   *   `generation` are the server's: generation starts at 1 and grows when `spec` changes.
   */
  function applyObject(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    options: { manager: string; force: boolean; dryRun?: boolean; onInvalid?: (problems: string[]) => void },
  ): FakeApplyResult {
    const bad = (message: string) => ({ code: 400, body: statusObject(400, 'BadRequest', message) });
    if (!isObject(body)) return bad(`the object provided is unrecognized (must be of type ${type.kind})`);
    if (body.apiVersion !== type.apiVersion) {
      return bad(
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${type.apiVersion})`,
      );
    }
    if (body.kind !== type.kind) {
      return bad(
        `the kind in the data (${String(body.kind)}) does not match the expected kind (${type.kind})`,
      );
    }
    const meta: KubeObject = isObject(body.metadata) ? body.metadata : {};
    if (meta.name !== name) {
      return bad(
        `the name of the object (${String(meta.name ?? '')}) does not match the name on the URL (${name})`,
      );
    }
    if (meta.namespace !== undefined && meta.namespace !== null && meta.namespace !== namespace) {
      return bad('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (Array.isArray(meta.managedFields) && meta.managedFields.length > 0) {
      return bad('metadata.managedFields must be nil');
    }
    const existing = store.get(keyOf(type, namespace, name));
    if (existing && typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '') {
      if (meta.resourceVersion !== existing.object.metadata.resourceVersion) {
        return {
          code: 409,
          body: statusObject(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${type.qualified} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            { name, group: type.group, kind: type.resource },
          ),
        };
      }
    }

    // The configuration this manager applies, without what the server owns.
    const config = withoutNulls(clone(body)) as KubeObject;
    delete config.apiVersion;
    delete config.kind;
    delete config.status;
    if (isObject(config.metadata)) {
      for (const k of ['name', 'namespace', ...SERVER_METADATA]) delete config.metadata[k];
      if (Object.keys(config.metadata).length === 0) delete config.metadata;
    }
    const stringData: unknown = config.stringData;
    if (type.kind === 'Secret' && isObject(stringData)) {
      config.data = isObject(config.data) ? config.data : {};
      for (const [k, v] of Object.entries(stringData)) {
        if (typeof v === 'string') config.data[k] = Buffer.from(v).toString('base64');
      }
      delete config.stringData;
    }
    const applied = leafPaths(config, (p) => isAtomicMap(`${type.apiVersion}/${type.kind}`, p));
    const appliedKeys = new Set(applied.map(pathKey));
    const others = [...(existing?.owners ?? [])].filter(([m]) => m !== options.manager);
    const ownedByOthers = (p: FieldPath) =>
      others.some(([, own]) => [...own.paths].some((k) => overlaps(pathOf(k), p)));

    // The candidate live object.
    const before: KubeObject = existing ? clone(existing.object) : { metadata: {} };
    delete before.metadata.managedFields;
    const candidate = clone(before);
    for (const k of existing?.owners.get(options.manager)?.paths ?? []) {
      const p = pathOf(k);
      if (applied.some((q) => overlaps(p, q)) || ownedByOthers(p)) continue;
      deleteAt(candidate, p);
    }
    for (const p of applied) {
      const v = getAt(config, p);
      if (isObject(v) && Object.keys(v).length === 0) {
        if (!isObject(getAt(candidate, p))) setAt(candidate, p, {});
      } else {
        setAt(candidate, p, clone(v));
      }
    }
    candidate.metadata.name = name;
    candidate.metadata.namespace = namespace;

    // The API server's order: the body is decoded against the kind's schema (types, unknown fields
    // refused as fieldValidation=Strict), merged (conflicts), then validated (names, labels,
    // selectors, immutable fields).
    const checked: KubeObject = { apiVersion: type.apiVersion, kind: type.kind, ...clone(candidate) };
    if (isObject(stringData)) checked.stringData = stringData;
    const invalid = (problems: ManifestProblem[]): FakeApplyResult => {
      const lines = problems.map((pr) => `${pr.field}: ${pr.message}`);
      options.onInvalid?.(lines);
      const kindName = type.group ? `${type.kind}.${type.group}` : type.kind;
      return {
        code: 422,
        body: statusObject(
          422,
          'Invalid',
          `${kindName} "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`,
          {
            name,
            group: type.group,
            kind: type.kind,
            causes: problems.map((pr) => ({ reason: pr.reason, message: pr.message, field: pr.field })),
          },
        ),
      };
    };
    const decoding = manifestProblems(checked, 'schema');
    if (decoding.length > 0) return invalid(decoding);
    applyDefaults(type, candidate);

    // Conflicts: fields another manager owns that this apply would change.
    const conflicts: Array<{ manager: string; path: FieldPath }> = [];
    for (const [manager, own] of others) {
      for (const k of own.paths) {
        const q = pathOf(k);
        const mine = applied.filter((p) => overlaps(p, q));
        if (mine.length === 0 || sameJson(getAt(before, q), getAt(candidate, q))) continue;
        for (const p of mine) conflicts.push({ manager, path: p.length >= q.length ? p : q });
      }
    }
    conflicts.sort(
      (a, b) => a.manager.localeCompare(b.manager) || showPath(a.path).localeCompare(showPath(b.path)),
    );
    if (conflicts.length > 0 && !options.force) {
      const list = conflicts.map((c) => `conflict with "${c.manager}": ${showPath(c.path)}`);
      return {
        code: 409,
        body: statusObject(
          409,
          'Conflict',
          conflicts.length === 1
            ? `Apply failed with 1 conflict: ${list[0]}`
            : `Apply failed with ${conflicts.length} conflicts: ${list.join('\n')}`,
          {
            causes: conflicts.map((c) => ({
              reason: 'FieldManagerConflict',
              message: `conflict with "${c.manager}"`,
              field: showPath(c.path),
            })),
          },
        ),
      };
    }

    const problems = manifestProblems(checked, 'rules');
    if (
      existing &&
      type.kind === 'Deployment' &&
      !sameJson(before.spec?.selector, candidate.spec?.selector)
    ) {
      problems.push({
        field: 'spec.selector',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(candidate.spec?.selector ?? null)}: field is immutable`,
      });
    }
    if (existing && type.kind === 'Secret' && before.immutable === true) {
      for (const field of ['data', 'type', 'immutable']) {
        if (!sameJson(before[field], candidate[field])) {
          problems.push({
            field,
            reason: 'FieldValueForbidden',
            message: 'Forbidden: field is immutable when `immutable` is set',
          });
        }
      }
    }
    if (problems.length > 0) return invalid(problems);

    // Ownership after the apply.
    const owners = new Map(
      [...(existing?.owners ?? [])].map(([m, own]) => [m, { ...own, paths: new Set(own.paths) }]),
    );
    for (const c of conflicts) {
      const own = owners.get(c.manager)!;
      for (const k of [...own.paths]) if (overlaps(pathOf(k), c.path)) own.paths.delete(k);
    }
    const time = now();
    owners.set(options.manager, { paths: appliedKeys, apiVersion: type.apiVersion, time });
    for (const [m, own] of owners) if (own.paths.size === 0) owners.delete(m);

    const sameOwners =
      !!existing &&
      existing.owners.size === owners.size &&
      [...owners].every(([m, own]) => {
        const old = existing.owners.get(m);
        return old && old.paths.size === own.paths.size && [...own.paths].every((k) => old.paths.has(k));
      });
    if (existing && sameOwners && sameJson(before, candidate)) {
      return { code: 200, body: render(existing) };
    }

    // Server-set metadata.
    const m = candidate.metadata;
    m.uid = existing?.object.metadata.uid ?? randomUUID();
    m.creationTimestamp = existing?.object.metadata.creationTimestamp ?? now();
    if (type.generation) {
      const generation: number = existing?.object.metadata.generation ?? 0;
      m.generation = !existing ? 1 : sameJson(before.spec, candidate.spec) ? generation : generation + 1;
    }
    if (!existing && type.kind === 'Deployment') candidate.status = {};
    if (!existing && type.kind === 'Service') candidate.status = { loadBalancer: {} };
    const ordered: KubeObject = { metadata: candidate.metadata, ...candidate };
    const stored: Stored = { type, object: ordered, owners, statusTime: existing?.statusTime };
    if (options.dryRun) {
      const o = render(stored);
      o.metadata.resourceVersion = existing?.object.metadata.resourceVersion;
      return { code: existing ? 200 : 201, body: o };
    }
    const previous = existing ? render(existing) : undefined;
    return { code: existing ? 200 : 201, body: commit(stored, existing ? 'MODIFIED' : 'ADDED', previous) };
  }

  /**
   * The deployment controller's part, moved by the test: `status` as the controller writes it
   * for the Deployment's current generation (observedGeneration = generation), and its pods.
   *
   * - `progressing`: the new ReplicaSet is rolling out. On a first rollout every replica is
   *   updated and none ready (Available False, MinimumReplicasUnavailable); when pods of an earlier
   *   template were available, one new replica is up besides them (Available True). Progressing
   *   True, reason ReplicaSetUpdated.
   * - `available`: every replica updated, ready and available; Available True
   *   (MinimumReplicasAvailable), Progressing True (NewReplicaSetAvailable). Its pods become
   *   `spec.replicas` pods `<deployment>-<pod-template-hash>-<i>` with the template's labels
   *   (plus `pod-template-hash`), containers and init containers, started, with empty logs,
   *   replacing the pods of an earlier template.
   * - `failed`: as progressing, with Progressing False, reason ProgressDeadlineExceeded and
   *   `message` (the controller's wording by default), and with `replicaFailure` a ReplicaFailure
   *   True condition (reason FailedCreate) carrying that message.
   *
   * A Deployment just applied has `status: {}` (the controller has not seen it); one whose spec
   * changed keeps its earlier status, whose observedGeneration is then behind its generation.
   */
  function setRollout(
    name: string,
    rollout: FakeRolloutState,
    options: { namespace?: string; message?: string; replicaFailure?: string } = {},
  ): KubeObject {
    const namespace = options.namespace ?? NAMESPACE;
    const type = typeOfKind('Deployment')!;
    const stored = store.get(keyOf(type, namespace, name));
    if (!stored) throw new Error(`no Deployment ${namespace}/${name} to roll out`);
    const previous = render(stored);
    const d = stored.object;
    const replicas: number = d.spec?.replicas ?? 1;
    const replicaSet = `${name}-${templateHash(d.spec?.template)}`;
    const old: KubeObject = isObject(d.status) ? d.status : {};
    const time = now();
    const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => {
      const was = (Array.isArray(old.conditions) ? old.conditions : []).find(
        (c: KubeObject) => c.type === type,
      );
      return {
        type,
        status,
        lastUpdateTime: time,
        lastTransitionTime: was?.status === status ? was.lastTransitionTime : time,
        reason,
        message,
      };
    };
    const available = (yes: boolean) =>
      yes
        ? condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
        : condition(
            'Available',
            'False',
            'MinimumReplicasUnavailable',
            'Deployment does not have minimum availability.',
          );
    const before = deploymentPods(namespace, name).length;
    let status: KubeObject;
    if (rollout === 'available') {
      status = {
        observedGeneration: d.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          available(true),
          condition(
            'Progressing',
            'True',
            'NewReplicaSetAvailable',
            `ReplicaSet "${replicaSet}" has successfully progressed.`,
          ),
        ],
      };
      removePods(namespace, name);
      const template: KubeObject = d.spec?.template ?? {};
      const hash = replicaSet.slice(name.length + 1);
      const containers: KubeObject[] = template.spec?.containers ?? [];
      const inits: KubeObject[] | undefined = template.spec?.initContainers;
      for (let i = 0; i < replicas; i++) {
        state.pods.push({
          name: `${replicaSet}-${i}`,
          namespace,
          labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash },
          containers: containers.map((c) => ({
            name: String(c.name),
            image: c.image,
            log: [],
            started: true,
          })),
          ...(inits
            ? { initContainers: inits.map((c) => ({ name: String(c.name), image: c.image, log: [] })) }
            : {}),
          replicaSet,
        });
      }
    } else {
      const rolling = before > 0;
      status = {
        observedGeneration: d.metadata.generation,
        replicas: rolling ? before + 1 : replicas,
        updatedReplicas: rolling ? 1 : replicas,
        readyReplicas: rolling ? before : 0,
        availableReplicas: rolling ? before : 0,
        unavailableReplicas: rolling ? 1 : replicas,
        conditions: [
          available(rolling),
          rollout === 'progressing'
            ? condition(
                'Progressing',
                'True',
                'ReplicaSetUpdated',
                `ReplicaSet "${replicaSet}" is progressing.`,
              )
            : condition(
                'Progressing',
                'False',
                'ProgressDeadlineExceeded',
                options.message ?? `ReplicaSet "${replicaSet}" has timed out progressing.`,
              ),
          ...(rollout === 'failed' && options.replicaFailure !== undefined
            ? [condition('ReplicaFailure', 'True', 'FailedCreate', options.replicaFailure)]
            : []),
        ],
      };
    }
    d.status = status;
    stored.statusTime = time;
    return commit(stored, 'MODIFIED', previous);
  }

  const denied = (verb: FakeVerb, resource: FakeDenial['resource'], namespace: string, name?: string) =>
    state.settings.deny.some(
      (d) =>
        d.verb === verb &&
        d.resource === resource &&
        (d.namespace === undefined || d.namespace === namespace) &&
        (d.name === undefined || d.name === name),
    );

  /** The authorizer's 403: `deployments.apps "x" is forbidden: User "..." cannot patch resource...`. */
  const forbidden = (
    verb: FakeVerb,
    resource: FakeDenial['resource'],
    group: string,
    namespace: string,
    name?: string,
  ): KubeObject => {
    const base = resource.split('/')[0];
    const qualified = group ? `${base}.${group}` : base;
    return statusObject(
      403,
      'Forbidden',
      `${qualified}${name ? ` "${name}"` : ''} is forbidden: User "${state.settings.user}" cannot ${verb} resource "${resource}" in API group "${group}" in the namespace "${namespace}"`,
      { ...(name ? { name } : {}), group, kind: base },
    );
  };

  /**
   * `GET <list path>?watch=true`: the watch cache's stream, one JSON event per line.
   *
   * - no `resourceVersion` (or `0`): an ADDED event for each object that matches, then changes;
   * - `resourceVersion=N`: the events after N, replayed from the history kept per resource, then
   *   changes; N older than the history (see `compact`) gets one ERROR event with a 410 `Expired`
   *   Status and the end of the stream;
   * - `labelSelector`, `fieldSelector`: only matching objects, an object modified into or out of
   *   the selection as ADDED or DELETED;
   * - `timeoutSeconds`: the stream ends after it (otherwise when the fake closes);
   * - `allowWatchBookmarks=true`: BOOKMARK events, sent when the test calls `bookmark()`.
   */
  function serveWatch(
    type: ResourceType,
    namespace: string,
    url: URL,
    selects: (o: KubeObject) => boolean,
    res: ServerResponse,
    fail: (code: number, message: string) => void,
  ) {
    const rv = url.searchParams.get('resourceVersion');
    const from = rv === null || rv === '' || rv === '0' ? null : Number(rv);
    if (from !== null && !Number.isInteger(from)) return fail(400, `resourceVersion: Invalid value: "${rv}"`);
    const timeout = url.searchParams.get('timeoutSeconds');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if (from !== null && from < compacted.get(type.resource)!) {
      const oldest = compacted.get(type.resource)! + 1;
      const expired = statusObject(410, 'Expired', `too old resource version: ${from} (${oldest})`);
      res.end(`${JSON.stringify({ type: 'ERROR', object: expired })}\n`);
      return;
    }
    const bookmarks = ['true', '1'].includes(url.searchParams.get('allowWatchBookmarks') ?? '');
    const w: Watcher = { type, namespace, selects, bookmarks, res };
    if (from === null) {
      const current = [...store.values()]
        .filter((s) => s.type === type && s.object.metadata.namespace === namespace)
        .map(render)
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      for (const object of current)
        deliver(w, { rv: Number(object.metadata.resourceVersion), type: 'ADDED', object });
    } else {
      for (const e of history.get(type.resource)!) if (e.rv > from) deliver(w, e);
    }
    watchers.add(w);
    if (timeout !== null && Number(timeout) > 0)
      w.timer = setTimeout(() => endWatch(w), Number(timeout) * 1000);
    res.on('close', () => {
      if (w.timer) clearTimeout(w.timer);
      watchers.delete(w);
    });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const header = req.headers.authorization;
    const auth: FakeRequest['auth'] = !header ? 'none' : header === `Bearer ${token}` ? 'ok' : 'wrong';
    const method = req.method ?? 'GET';
    const record: FakeRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      auth,
    };
    let body: unknown;
    let parsed = true;
    if (method !== 'GET') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
      record.contentType = contentType;
      try {
        body = text === '' ? undefined : contentType === APPLY_PATCH ? parseYaml(text) : JSON.parse(text);
      } catch {
        body = text;
        parsed = false;
      }
      record.body = body;
    }
    state.requests.push(record);
    if (state.settings.hang) return;
    const send = (code: number, text: string, type = 'application/json') => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(text);
    };
    const sendJson = (code: number, value: unknown) => send(code, JSON.stringify(value));
    const fail = (code: number, message: string) =>
      send(code, status(code, REASONS[code] ?? 'Unknown', message));
    if (state.settings.failWith !== null) return fail(state.settings.failWith, 'injected failure');
    if (auth !== 'ok') return fail(401, 'Unauthorized');

    let m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname);
    if (m) {
      if (method !== 'GET') return fail(405, 'method not allowed');
      if (denied('list', 'pods', m[1])) return sendJson(403, forbidden('list', 'pods', '', m[1]));
      const selector = url.searchParams.get('labelSelector') ?? '';
      let items;
      try {
        items = state.pods
          .filter((p) => p.namespace === m![1] && (selector === '' || matches(selector, p.labels)))
          .map(toPod);
      } catch (e) {
        return fail(400, `unable to parse requirement: ${(e as Error).message}`);
      }
      return send(
        200,
        JSON.stringify({
          kind: 'PodList',
          apiVersion: 'v1',
          metadata: { resourceVersion: String(revision) },
          items,
        }),
      );
    }
    const log = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname);
    if (log) {
      if (method !== 'GET') return fail(405, 'method not allowed');
      if (denied('get', 'pods/log', log[1], log[2]))
        return sendJson(403, forbidden('get', 'pods/log', '', log[1], log[2]));
      const pod = state.pods.find((p) => p.namespace === log[1] && p.name === log[2]);
      if (!pod) return fail(404, `pods "${log[2]}" not found`);
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

    m =
      /^\/(?:api\/v1|apis\/([a-z0-9.]+)\/v1)\/namespaces\/([^/]+)\/(deployments|services|secrets|networkpolicies)(?:\/([^/]+)(\/status)?)?$/.exec(
        url.pathname,
      );
    const type = m ? TYPES.find((t) => t.resource === m[3] && t.group === (m[1] ?? '')) : undefined;
    if (!m || !type || (m[5] && type.kind !== 'Deployment')) {
      return fail(404, 'the server could not find the requested resource');
    }
    const [, , namespace, , name] = m;
    const notFound = () =>
      sendJson(
        404,
        statusObject(404, 'NotFound', `${type.qualified} "${name}" not found`, {
          name,
          group: type.group,
          kind: type.resource,
        }),
      );

    if (name === undefined) {
      if (method !== 'GET') return fail(405, `the fake serves no ${method} on a list of ${type.resource}`);
      const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
      const verb = watch ? 'watch' : 'list';
      if (denied(verb, type.resource, namespace)) {
        return sendJson(403, forbidden(verb, type.resource, type.group, namespace));
      }
      let selects: (o: KubeObject) => boolean;
      try {
        const labels = url.searchParams.get('labelSelector') ?? '';
        const fields = fieldMatcher(url.searchParams.get('fieldSelector') ?? '');
        matches(labels, {});
        selects = (o) => (labels === '' || matches(labels, o.metadata.labels ?? {})) && fields(o);
      } catch (e) {
        return fail(400, (e as Error).message);
      }
      if (watch) return serveWatch(type, namespace, url, selects, res, fail);
      const items = [...store.values()]
        .filter((s) => s.type === type && s.object.metadata.namespace === namespace)
        .map((s) => {
          const { kind: _kind, apiVersion: _apiVersion, ...item } = render(s);
          return item;
        })
        .filter(selects)
        .sort((a, b) => (a.metadata.name as string).localeCompare(b.metadata.name as string));
      return sendJson(200, {
        kind: `${type.kind}List`,
        apiVersion: type.apiVersion,
        metadata: { resourceVersion: String(revision) },
        items,
      });
    }

    const stored = store.get(keyOf(type, namespace, name));
    if (method === 'GET') {
      if (denied('get', type.resource, namespace, name)) {
        return sendJson(403, forbidden('get', type.resource, type.group, namespace, name));
      }
      return stored ? sendJson(200, render(stored)) : notFound();
    }
    if (m[5]) return fail(405, `the fake serves no ${method} on deployments/status`);

    if (method === 'DELETE') {
      if (denied('delete', type.resource, namespace, name)) {
        return sendJson(403, forbidden('delete', type.resource, type.group, namespace, name));
      }
      const policy =
        url.searchParams.get('propagationPolicy') ??
        (isObject(body) && typeof body.propagationPolicy === 'string' ? body.propagationPolicy : null);
      if (policy !== null && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
        return sendJson(
          422,
          statusObject(
            422,
            'Invalid',
            `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
          ),
        );
      }
      if (!stored) return notFound();
      const details = { name, group: type.group, kind: type.resource, uid: stored.object.metadata.uid };
      const success = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
      if (url.searchParams.get('dryRun') === 'All') return sendJson(200, success);
      store.delete(keyOf(type, namespace, name));
      revision += 1;
      stored.object.metadata.resourceVersion = String(revision);
      publish(type, { type: 'DELETED', object: render(stored) });
      if (type.kind === 'Deployment' && policy !== 'Orphan') removePods(namespace, name);
      return sendJson(200, success);
    }

    if (method !== 'PATCH') {
      return fail(405, `the fake serves ${type.resource} by server-side apply (PATCH) only, not ${method}`);
    }
    if (record.contentType !== APPLY_PATCH) {
      return fail(
        415,
        `the fake accepts only server-side apply (Content-Type: ${APPLY_PATCH}), not ${record.contentType || 'none'}`,
      );
    }
    const manager = url.searchParams.get('fieldManager') ?? '';
    const validation = url.searchParams.get('fieldValidation') ?? 'Strict';
    const invalidOption = (field: string, reason: string, message: string) =>
      sendJson(
        422,
        statusObject(422, 'Invalid', `PatchOptions.meta.k8s.io "" is invalid: ${field}: ${message}`, {
          group: 'meta.k8s.io',
          kind: 'PatchOptions',
          causes: [{ reason, message, field }],
        }),
      );
    if (manager === '') {
      return invalidOption(
        'fieldManager',
        'FieldValueRequired',
        'Required value: is required for apply patch',
      );
    }
    if (!['Strict', 'Warn', 'Ignore'].includes(validation)) {
      return invalidOption(
        'fieldValidation',
        'FieldValueNotSupported',
        `Unsupported value: "${validation}": supported values: "Ignore", "Strict", "Warn"`,
      );
    }
    const force = url.searchParams.get('force');
    if (force !== null && !['true', 'false', '1', '0'].includes(force)) {
      return fail(400, `force: invalid value "${force}"`);
    }
    if (!parsed) return fail(400, 'error decoding YAML: the body of the request is neither JSON nor YAML');
    if (denied('patch', type.resource, namespace, name)) {
      return sendJson(403, forbidden('patch', type.resource, type.group, namespace, name));
    }
    if (!stored && denied('create', type.resource, namespace, name)) {
      return sendJson(403, forbidden('create', type.resource, type.group, namespace, name));
    }
    const result = applyObject(type, namespace, name, body, {
      manager,
      force: force === 'true' || force === '1',
      dryRun: url.searchParams.get('dryRun') === 'All',
      onInvalid: (problems) =>
        state.invalid.push({ kind: type.kind, namespace, name, fieldManager: manager, problems }),
    });
    return sendJson(result.code, result.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(status(500, 'InternalError', `fake: ${e.message}`));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let files = 0;

  const kindType = (kind: string) => {
    const type = typeOfKind(kind);
    if (!type) throw new Error(`the fake stores no ${kind} (only ${TYPES.map((t) => t.kind).join(', ')})`);
    return type;
  };

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
    get invalid() {
      return state.invalid;
    },
    set invalid(value) {
      state.invalid = value;
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
        KUBERNETES_PLATFORM_URL: options.platformUrl ?? PLATFORM_URL,
        ...(options.timeoutMs !== undefined
          ? { DEPLOYMENT_RUNTIME_TIMEOUT_MS: String(options.timeoutMs) }
          : {}),
      };
    },
    applyAs(fieldManager, manifest, options = {}) {
      const type = kindType(String(manifest.kind));
      const namespace = manifest.metadata?.namespace ?? options.namespace ?? NAMESPACE;
      return applyObject(type, namespace, String(manifest.metadata?.name ?? ''), manifest, {
        manager: fieldManager,
        force: options.force ?? false,
      });
    },
    setRollout,
    objects(kind) {
      const type = kind === undefined ? undefined : kindType(kind);
      return [...store.values()]
        .filter((s) => type === undefined || s.type === type)
        .map(render)
        .sort(
          (a, b) =>
            a.metadata.namespace.localeCompare(b.metadata.namespace) ||
            a.kind.localeCompare(b.kind) ||
            a.metadata.name.localeCompare(b.metadata.name),
        );
    },
    get(kind, name, namespace = NAMESPACE) {
      const stored = store.get(keyOf(kindType(kind), namespace, name));
      return stored ? render(stored) : undefined;
    },
    watchers(kind) {
      return [...watchers].filter((w) => kind === undefined || w.type.kind === kind).length;
    },
    bookmark() {
      for (const w of watchers) {
        if (!w.bookmarks) continue;
        const object = {
          kind: w.type.kind,
          apiVersion: w.type.apiVersion,
          metadata: { resourceVersion: String(revision) },
        };
        w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
      }
    },
    compact() {
      for (const t of TYPES) {
        history.set(t.resource, []);
        compacted.set(t.resource, revision);
      }
    },
    resourceVersion: () => String(revision),
    reset() {
      state.settings.failWith = null;
      state.settings.hang = false;
      state.settings.deny = [];
      state.settings.user = FAKE_USER;
      state.requests = [];
      state.invalid = [];
    },
    clear() {
      store.clear();
      state.pods = state.pods.filter((p) => p.replicaSet === undefined);
      fake.compact();
    },
    close: async () => {
      for (const w of [...watchers]) endWatch(w);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return fake;
}
