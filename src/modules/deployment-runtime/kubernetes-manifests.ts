import { createHash, createHmac } from 'node:crypto';
import type { KubernetesReconcileConfig } from '../../core/config/app-config.js';

/**
 * The objects one environment of a deployment runs as on Kubernetes, built from what the platform
 * records (framework-free: the reconciler applies them, tests check them against Kubernetes' own
 * schema). Names, labels and the pod are described in docs/deployments.md ("Running deployments on
 * Kubernetes").
 */

/** The field manager of every server-side apply, and the value of the owner label. */
export const FIELD_MANAGER = 'analytics-platform-api';

/** Label keys. `deployment` and `source` are what the pod and log reads select on. */
export const LABEL = {
  managedBy: 'app.kubernetes.io/managed-by',
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  installation: 'analytics-platform/installation',
  deployment: 'deployment',
  source: 'source',
  environment: 'environment',
  branch: 'branch',
} as const;

/** Annotation keys (never a secret value: the env Secret is represented by an HMAC only). */
export const ANNOTATION = {
  branch: 'analytics-platform/branch',
  commit: 'analytics-platform/commit',
  version: 'analytics-platform/version',
  envChecksum: 'analytics-platform/env-checksum',
} as const;

/** This service's own pods, as its NetworkPolicies admit them (docker/kubernetes labels them so). */
export const PLATFORM_POD_LABEL = { [LABEL.name]: 'analytics-platform-api' };

/** The port Cube's data API listens on in the pod (`PORT`), and the Service's. */
export const DATA_API_PORT = 4000;
/** This service's port, as its pods listen (the git fetch goes there). */
const PLATFORM_PORT = 3000;

/** Where the model is put in the pod: Cube's working directory. */
const MODEL_DIR = '/cube/conf';

/**
 * The init container's script: a shallow fetch of exactly the built commit (upload-pack serves a
 * commit its served branches reach), then the project's folder of it unpacked where Cube reads
 * it. Its inputs come as environment variables, never spliced into the script.
 */
const FETCH_SCRIPT = [
  'git init -q /tmp/model',
  'cd /tmp/model',
  'git fetch -q --no-tags --depth=1 "$GIT_URL" "$GIT_COMMIT"',
  'test "$(git rev-parse FETCH_HEAD)" = "$GIT_COMMIT"',
  'if [ -n "$GIT_ROOT" ]; then tree="FETCH_HEAD:$GIT_ROOT"; else tree=FETCH_HEAD; fi',
  `git archive --format=tar "$tree" | tar -x -C ${MODEL_DIR}`,
].join('\n');

/** What Cube needs set whatever the deployment's env vars say. */
const FORCED_ENV = { PORT: String(DATA_API_PORT), CUBEJS_DEV_MODE: 'false' };
/** What Cube gets unless the deployment's env vars say otherwise. */
const DEFAULT_ENV = { CUBEJS_CACHE_AND_QUEUE_DRIVER: 'memory' };

/** Private, loopback, link-local (metadata), CGNAT and other non-public ranges: no egress there. */
const PRIVATE_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const PRIVATE_V6 = ['::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8', '::ffff:0:0/96', '64:ff9b::/96'];

export type EnvironmentType = 'production' | 'staging';

/** One environment as it should run. */
export interface EnvironmentSpec {
  deploymentId: number;
  environmentId: number;
  type: EnvironmentType;
  branch: string;
  /** The branch's last successful build's commit. */
  commit: string;
  /** The Cube release (`1.6.2`). */
  version: string;
  /** The repository folder holding the project (`''`: the root). */
  projectRoot: string;
  /** The deployment's env vars (for staging, its own `CUBEJS_API_SECRET` already in place). */
  env: ReadonlyMap<string, string>;
  /** A git read credential for the deployment. */
  gitCredential: string;
}

/** Where and how the objects are made. */
export interface ManifestSettings {
  installationId: string;
  namespace: string;
  reconcile: KubernetesReconcileConfig;
  /** Keys the env checksum (an HMAC, so the annotation tells nothing of the values). */
  checksumKey: Buffer;
}

/** A Kubernetes object as sent (apiVersion, kind, metadata, then the kind's own fields). */
export interface Manifest {
  apiVersion: string;
  kind: ManagedKind;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export const MANAGED_KINDS = ['Secret', 'Service', 'NetworkPolicy', 'Deployment'] as const;
export type ManagedKind = (typeof MANAGED_KINDS)[number];

/** The objects of one environment, in the order they are applied (what a pod needs comes first). */
export interface EnvironmentManifests {
  envSecret: Manifest;
  gitSecret: Manifest;
  service: Manifest;
  networkPolicy: Manifest | null;
  deployment: Manifest;
}

/** `cube-<deploymentId>` for production (its Service is the data API address), else with the environment. */
export function objectName(deploymentId: number, environment: { id: number; type: EnvironmentType }): string {
  return environment.type === 'production'
    ? `cube-${deploymentId}`
    : `cube-${deploymentId}-env-${environment.id}`;
}

/** The in-cluster address of a deployment's production Service (the default data API address). */
export function productionAddress(deploymentId: number, namespace: string): string {
  return `http://${objectName(deploymentId, { id: 0, type: 'production' })}.${namespace}.svc:${DATA_API_PORT}`;
}

/** The label selector of everything this installation made (for one deployment, when given). */
export function ownedSelector(installationId: string, deploymentId?: number): string {
  return [
    `${LABEL.managedBy}=${FIELD_MANAGER}`,
    `${LABEL.installation}=${installationId}`,
    ...(deploymentId === undefined ? [] : [`${LABEL.deployment}=${deploymentId}`]),
  ].join(',');
}

/** Whether an object's labels say this installation made it. */
export function isOwned(labels: Record<string, string> | undefined, installationId: string): boolean {
  return labels?.[LABEL.managedBy] === FIELD_MANAGER && labels?.[LABEL.installation] === installationId;
}

/** A label value standing for a branch name: the name when it is a valid value, else a readable form with a hash. */
export function branchLabel(branch: string): string {
  if (/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(branch) && branch.length <= 63) return branch;
  const hash = createHash('sha256').update(branch).digest('hex').slice(0, 10);
  const readable = branch
    .replace(/[^-A-Za-z0-9_.]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 50)
    .replace(/[^A-Za-z0-9]+$/, '');
  return readable ? `${readable}-${hash}` : hash;
}

/** The env vars the data API container gets: the deployment's, with the forced ones over them. */
export function containerEnv(env: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...DEFAULT_ENV };
  for (const [name, value] of [...env].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[name] = value;
  return { ...out, ...FORCED_ENV };
}

/** The `Authorization` header git sends with the credential (Basic, as git's client does). */
export function gitAuthorizationHeader(credential: string): string {
  return `Authorization: Basic ${Buffer.from(`git:${credential}`).toString('base64')}`;
}

export function environmentManifests(
  spec: EnvironmentSpec,
  settings: ManifestSettings,
): EnvironmentManifests {
  const { namespace, reconcile } = settings;
  const name = objectName(spec.deploymentId, { id: spec.environmentId, type: spec.type });
  const labels: Record<string, string> = {
    [LABEL.managedBy]: FIELD_MANAGER,
    [LABEL.name]: 'cube',
    [LABEL.component]: 'data-api',
    [LABEL.installation]: settings.installationId,
    [LABEL.deployment]: String(spec.deploymentId),
    [LABEL.source]: spec.type === 'production' ? 'production' : 'dev',
    [LABEL.environment]: String(spec.environmentId),
    [LABEL.branch]: branchLabel(spec.branch),
  };
  const metadata = (objectNameOf: string, annotations?: Record<string, string>) => ({
    name: objectNameOf,
    namespace,
    labels,
    ...(annotations ? { annotations } : {}),
  });
  const selector = {
    [LABEL.installation]: settings.installationId,
    [LABEL.environment]: String(spec.environmentId),
  };
  const env = containerEnv(spec.env);
  const envChecksum = createHmac('sha256', settings.checksumKey)
    .update(JSON.stringify(Object.entries(env)))
    .digest('hex');

  const envSecret: Manifest = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(`${name}-env`),
    type: 'Opaque',
    data: base64Values(env),
  };
  const gitSecret: Manifest = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(`${name}-git`),
    type: 'Opaque',
    data: base64Values({ GIT_CONFIG_VALUE_0: gitAuthorizationHeader(spec.gitCredential) }),
  };
  const service: Manifest = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(name),
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: DATA_API_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
  const networkPolicy: Manifest | null = reconcile.networkPolicy
    ? {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: metadata(name),
        spec: {
          podSelector: { matchLabels: selector },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [
            {
              from: [{ namespaceSelector: {}, podSelector: { matchLabels: PLATFORM_POD_LABEL } }],
              ports: [{ protocol: 'TCP', port: DATA_API_PORT }],
            },
          ],
          egress: [
            {
              ports: [
                { protocol: 'UDP', port: 53 },
                { protocol: 'TCP', port: 53 },
              ],
            },
            {
              to: [{ namespaceSelector: {}, podSelector: { matchLabels: PLATFORM_POD_LABEL } }],
              ports: [{ protocol: 'TCP', port: PLATFORM_PORT }],
            },
            {
              to: [
                { ipBlock: { cidr: '0.0.0.0/0', except: PRIVATE_V4 } },
                { ipBlock: { cidr: '::/0', except: PRIVATE_V6 } },
              ],
            },
            ...(reconcile.egressAllowedCidrs.length > 0
              ? [{ to: reconcile.egressAllowedCidrs.map((cidr) => ({ ipBlock: { cidr } })) }]
              : []),
          ],
        },
      }
    : null;

  const model = { name: 'model', mountPath: MODEL_DIR };
  const containerSecurity = {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  };
  const deployment: Manifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(name, { [ANNOTATION.branch]: spec.branch }),
    spec: {
      replicas: spec.type === 'production' ? reconcile.replicas : reconcile.stagingReplicas,
      revisionHistoryLimit: 3,
      progressDeadlineSeconds: reconcile.progressDeadlineSeconds,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels,
          annotations: {
            [ANNOTATION.branch]: spec.branch,
            [ANNOTATION.commit]: spec.commit,
            [ANNOTATION.version]: spec.version,
            [ANNOTATION.envChecksum]: envChecksum,
          },
        },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(reconcile.imagePullSecrets.length > 0
            ? { imagePullSecrets: reconcile.imagePullSecrets.map((s) => ({ name: s })) }
            : {}),
          volumes: [
            { name: 'model', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
          initContainers: [
            {
              name: 'fetch-model',
              image: reconcile.gitImage,
              command: ['/bin/sh', '-ec', FETCH_SCRIPT],
              env: [
                {
                  name: 'GIT_URL',
                  value: `${reconcile.platformUrl}/build/api/v1/deployments/${spec.deploymentId}/git`,
                },
                { name: 'GIT_COMMIT', value: spec.commit },
                { name: 'GIT_ROOT', value: spec.projectRoot.replace(/^\/+|\/+$/g, '') },
                { name: 'HOME', value: '/tmp' },
                { name: 'GIT_TERMINAL_PROMPT', value: '0' },
                { name: 'GIT_CONFIG_COUNT', value: '1' },
                { name: 'GIT_CONFIG_KEY_0', value: 'http.extraHeader' },
                {
                  name: 'GIT_CONFIG_VALUE_0',
                  valueFrom: { secretKeyRef: { name: `${name}-git`, key: 'GIT_CONFIG_VALUE_0' } },
                },
              ],
              volumeMounts: [model, { name: 'tmp', mountPath: '/tmp' }],
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '1', memory: '512Mi' },
              },
              securityContext: containerSecurity,
            },
          ],
          containers: [
            {
              name: 'cubejs-server',
              image: `${reconcile.cubeImage}:v${spec.version}`,
              envFrom: [{ secretRef: { name: `${name}-env` } }],
              ports: [{ name: 'http', containerPort: DATA_API_PORT, protocol: 'TCP' }],
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              livenessProbe: {
                httpGet: { path: '/livez', port: 'http' },
                initialDelaySeconds: 30,
                periodSeconds: 20,
                failureThreshold: 3,
              },
              resources: {
                requests: { cpu: reconcile.resources.cpuRequest, memory: reconcile.resources.memoryRequest },
                limits: { cpu: reconcile.resources.cpuLimit, memory: reconcile.resources.memoryLimit },
              },
              volumeMounts: [model],
              securityContext: containerSecurity,
            },
          ],
        },
      },
    },
  };
  return { envSecret, gitSecret, service, networkPolicy, deployment };
}

/** The objects in apply order. */
export function inApplyOrder(m: EnvironmentManifests): Manifest[] {
  return [m.envSecret, m.gitSecret, m.service, ...(m.networkPolicy ? [m.networkPolicy] : []), m.deployment];
}

function base64Values(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
}

/** A Deployment's rollout, read as `kubectl rollout status` reads it. */
export interface RolloutState {
  status: 'deploying' | 'deployed' | 'failed';
  reason: string | null;
}

interface DeploymentLike {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

export function rolloutState(d: DeploymentLike): RolloutState {
  const status = d.status ?? {};
  const generation = d.metadata?.generation ?? 0;
  const condition = (type: string) => status.conditions?.find((c) => c.type === type);
  if ((status.observedGeneration ?? 0) < generation) {
    return { status: 'deploying', reason: 'Waiting for the cluster to take the change' };
  }
  const progressing = condition('Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return { status: 'failed', reason: progressing.message ?? 'The rollout exceeded its progress deadline' };
  }
  const replicaFailure = condition('ReplicaFailure');
  if (replicaFailure?.status === 'True') {
    return { status: 'failed', reason: replicaFailure.message ?? 'Pods could not be created' };
  }
  const want = d.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < want) {
    return { status: 'deploying', reason: `${updated} of ${want} replicas updated` };
  }
  if ((status.replicas ?? 0) > updated) {
    return {
      status: 'deploying',
      reason: `${(status.replicas ?? 0) - updated} old replicas are pending termination`,
    };
  }
  if (available < updated) {
    return { status: 'deploying', reason: `${available} of ${updated} updated replicas available` };
  }
  return { status: 'deployed', reason: null };
}
