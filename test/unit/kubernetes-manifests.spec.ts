import { randomBytes } from 'node:crypto';
import { AppConfig, type KubernetesReconcileConfig } from '../../src/core/config/app-config.js';
import {
  ANNOTATION,
  branchLabel,
  containerEnv,
  environmentManifests,
  gitAuthorizationHeader,
  inApplyOrder,
  LABEL,
  objectName,
  ownedSelector,
  productionAddress,
  rolloutState,
  type EnvironmentSpec,
  type ManifestSettings,
} from '../../src/modules/deployment-runtime/kubernetes-manifests.js';
import { credentialExpiry } from '../../src/modules/deployment-runtime/runtime-reconciler.service.js';
import { validateManifest } from '../support/kubernetes-schemas.js';

/** The defaults, as the configuration reads them (test/unit/runtime.spec.ts checks each). */
const RECONCILE: KubernetesReconcileConfig = new AppConfig('api', {
  NODE_ENV: 'test',
  DEPLOYMENT_RUNTIME: 'kubernetes',
  KUBERNETES_SERVICE_HOST: '10.0.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_PLATFORM_URL: 'http://analytics-platform-api.analytics.svc:3000',
}).runtime.kubernetes!.reconcile;

const settings = (reconcile: Partial<KubernetesReconcileConfig> = {}): ManifestSettings => ({
  installationId: '0b7c6a0e-5d1f-4a53-9a43-3c5f2a1f9d10',
  namespace: 'analytics',
  reconcile: { ...RECONCILE, ...reconcile },
  checksumKey: Buffer.alloc(32, 3),
});

/** Parsed JSON of any shape (manifests are read as their fields, not as a type). */
type Loose = ReturnType<typeof JSON.parse>;

const SECRET = 'do-not-leak-4c1f0e';

const spec = (overrides: Partial<EnvironmentSpec> = {}): EnvironmentSpec => ({
  deploymentId: 42,
  environmentId: 7,
  type: 'production',
  branch: 'main',
  commit: 'a'.repeat(40),
  version: '1.6.2',
  projectRoot: '',
  env: new Map([
    ['CUBEJS_API_SECRET', SECRET],
    ['CUBEJS_DB_TYPE', 'postgres'],
  ]),
  gitCredential: `gitr_1_42_1900000000_${'x'.repeat(43)}`,
  ...overrides,
});

const decode = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

describe('the objects an environment runs as', () => {
  it('are valid Kubernetes objects of their kinds, in every variation the settings allow', () => {
    const variations: Array<[Partial<EnvironmentSpec>, Partial<KubernetesReconcileConfig>]> = [
      [{}, {}],
      [{ type: 'staging', environmentId: 9, branch: 'feature/orders' }, {}],
      [{ projectRoot: '/analytics/cube/' }, { imagePullSecrets: ['regcred'], networkPolicy: false }],
      [
        {},
        { egressAllowedCidrs: ['10.20.0.0/16', 'fd00::/8'], cubeImage: 'registry.example.com:5000/m/cube' },
      ],
    ];
    for (const [s, r] of variations) {
      for (const manifest of inApplyOrder(environmentManifests(spec(s), settings(r)))) {
        expect([manifest.kind, manifest.metadata.name, validateManifest(manifest)]).toEqual([
          manifest.kind,
          manifest.metadata.name,
          [],
        ]);
      }
    }
  });

  it('are named after the deployment (production: its data API address) or the environment', () => {
    expect(objectName(42, { id: 7, type: 'production' })).toBe('cube-42');
    expect(objectName(42, { id: 9, type: 'staging' })).toBe('cube-42-env-9');
    expect(productionAddress(42, 'analytics')).toBe('http://cube-42.analytics.svc:4000');
    const m = environmentManifests(spec({ type: 'staging', environmentId: 9 }), settings());
    expect(inApplyOrder(m).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Secret/cube-42-env-9-env',
      'Secret/cube-42-env-9-git',
      'Service/cube-42-env-9',
      'NetworkPolicy/cube-42-env-9',
      'Deployment/cube-42-env-9',
    ]);
  });

  it('carry the labels the pod and log reads select on, the owner label, and a selector that never changes', () => {
    const m = environmentManifests(
      spec({ type: 'staging', environmentId: 9, branch: 'feature/orders' }),
      settings(),
    );
    const labels = m.deployment.metadata.labels;
    expect(labels).toMatchObject({
      [LABEL.managedBy]: 'analytics-platform-api',
      [LABEL.deployment]: '42',
      [LABEL.source]: 'dev',
      [LABEL.environment]: '9',
    });
    expect(labels[LABEL.branch]).toMatch(/^feature-orders-[0-9a-f]{10}$/);
    expect(m.deployment.metadata.annotations![ANNOTATION.branch]).toBe('feature/orders');
    const deploymentSpec = m.deployment.spec as {
      selector: unknown;
      template: { metadata: { labels: unknown } };
    };
    expect(deploymentSpec.selector).toEqual({
      matchLabels: { [LABEL.installation]: settings().installationId, [LABEL.environment]: '9' },
    });
    expect(deploymentSpec.template.metadata.labels).toEqual(labels);
    expect(environmentManifests(spec(), settings()).deployment.metadata.labels[LABEL.source]).toBe(
      'production',
    );
    expect(ownedSelector('inst', 42)).toBe(
      'app.kubernetes.io/managed-by=analytics-platform-api,analytics-platform/installation=inst,deployment=42',
    );
  });

  it('fetch the built commit of the project folder with the credential from its Secret, never in the pod spec', () => {
    const m = environmentManifests(spec({ projectRoot: '/analytics/' }), settings());
    const pod = (m.deployment.spec as { template: { spec: Record<string, Loose> } }).template.spec;
    const init = pod.initContainers[0];
    const env = Object.fromEntries(init.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect(env).toMatchObject({
      GIT_URL: 'http://analytics-platform-api.analytics.svc:3000/build/api/v1/deployments/42/git',
      GIT_COMMIT: 'a'.repeat(40),
      GIT_ROOT: 'analytics',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
    });
    expect(init.env.find((e: { name: string }) => e.name === 'GIT_CONFIG_VALUE_0').valueFrom).toEqual({
      secretKeyRef: { name: 'cube-42-git', key: 'GIT_CONFIG_VALUE_0' },
    });
    expect(decode(m.gitSecret.data as Record<string, string>)).toEqual({
      GIT_CONFIG_VALUE_0: gitAuthorizationHeader(spec().gitCredential),
    });
    expect(pod.containers[0]).toMatchObject({
      name: 'cubejs-server',
      image: 'cubejs/cube:v1.6.2',
      envFrom: [{ secretRef: { name: 'cube-42-env' } }],
    });
    // Tenant code runs in this pod: no service-account token, no service links, no root.
    expect(pod).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: { runAsNonRoot: true },
    });
    // Nothing secret outside the Secrets.
    const outside = JSON.stringify([m.deployment, m.service, m.networkPolicy]);
    expect(outside).not.toContain(SECRET);
    expect(outside).not.toContain(spec().gitCredential);
    expect(outside).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('give Cube the deployment’s env vars, with the port and production mode it must run in', () => {
    const env = containerEnv(
      new Map([
        ['PORT', '9999'],
        ['CUBEJS_DEV_MODE', 'true'],
        ['CUBEJS_CACHE_AND_QUEUE_DRIVER', 'cubestore'],
        ['CUBEJS_DB_TYPE', 'snowflake'],
      ]),
    );
    expect(env).toEqual({
      PORT: '4000',
      CUBEJS_DEV_MODE: 'false',
      CUBEJS_CACHE_AND_QUEUE_DRIVER: 'cubestore',
      CUBEJS_DB_TYPE: 'snowflake',
    });
    expect(containerEnv(new Map()).CUBEJS_CACHE_AND_QUEUE_DRIVER).toBe('memory');
  });

  it('roll the pods when an env var changes, through a checksum that tells nothing of the values', () => {
    const template = (s: EnvironmentSpec, key = settings()) =>
      (
        environmentManifests(s, key).deployment.spec as {
          template: { metadata: { annotations: Record<string, string> } };
        }
      ).template.metadata.annotations;
    const before = template(spec());
    const after = template(spec({ env: new Map([['CUBEJS_API_SECRET', 'rotated']]) }));
    expect(after[ANNOTATION.envChecksum]).not.toBe(before[ANNOTATION.envChecksum]);
    // The same values under another key: an HMAC, not a plain hash anyone could recompute.
    const otherKey = template(spec(), { ...settings(), checksumKey: randomBytes(32) });
    expect(otherKey[ANNOTATION.envChecksum]).not.toBe(before[ANNOTATION.envChecksum]);
    // A refreshed git credential does not roll the pods.
    expect(template(spec({ gitCredential: 'gitr_other' }))).toEqual(before);
  });

  it('admit only this service’s pods and reach only public addresses, DNS and this service', () => {
    const policy = environmentManifests(
      spec(),
      settings({ egressAllowedCidrs: ['10.20.0.0/16'] }),
    ).networkPolicy!;
    const p = policy.spec as { ingress: unknown[]; egress: Array<{ to?: Array<Record<string, Loose>> }> };
    expect(p.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: {},
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'analytics-platform-api' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 4000 }],
      },
    ]);
    const blocks = p.egress.flatMap((r) => r.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock] : []));
    expect(blocks[0]).toMatchObject({ cidr: '0.0.0.0/0' });
    expect(blocks[0].except).toEqual(expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16', '127.0.0.0/8']));
    expect(blocks[1].except).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
    expect(blocks[2]).toEqual({ cidr: '10.20.0.0/16' });
  });
});

describe('branch labels', () => {
  it('keep a name that is a valid label value, and make a stable one of any other', () => {
    expect(branchLabel('main')).toBe('main');
    expect(branchLabel('release-1.2')).toBe('release-1.2');
    const odd = branchLabel('feature/ü_ber');
    expect(odd).toMatch(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/);
    expect(odd).toBe(branchLabel('feature/ü_ber'));
    expect(branchLabel('x'.repeat(80)).length).toBeLessThanOrEqual(63);
    expect(branchLabel('///')).toMatch(/^[0-9a-f]{10}$/);
  });
});

describe('rollout state (as kubectl rollout status reads a Deployment)', () => {
  const d = (status: Record<string, unknown>, generation = 2, replicas = 2) => ({
    metadata: { generation },
    spec: { replicas },
    status,
  });
  it('is deploying until the controller saw the change and every replica is updated and available', () => {
    expect(rolloutState(d({}))).toMatchObject({ status: 'deploying' });
    expect(
      rolloutState(d({ observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2, replicas: 2 })),
    ).toMatchObject({
      status: 'deploying',
    });
    expect(
      rolloutState(d({ observedGeneration: 2, updatedReplicas: 1, replicas: 3, availableReplicas: 2 })),
    ).toEqual({
      status: 'deploying',
      reason: '1 of 2 replicas updated',
    });
    expect(
      rolloutState(d({ observedGeneration: 2, updatedReplicas: 2, replicas: 3, availableReplicas: 2 })),
    ).toEqual({
      status: 'deploying',
      reason: '1 old replicas are pending termination',
    });
    expect(
      rolloutState(d({ observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2 })),
    ).toEqual({
      status: 'deployed',
      reason: null,
    });
  });
  it('is failed with the condition’s message when the progress deadline passed or pods cannot be made', () => {
    const stuck = {
      observedGeneration: 2,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "cube-42-5d8" has timed out progressing.',
        },
      ],
    };
    expect(rolloutState(d(stuck))).toEqual({
      status: 'failed',
      reason: 'ReplicaSet "cube-42-5d8" has timed out progressing.',
    });
    const quota = {
      observedGeneration: 2,
      conditions: [
        { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota' },
      ],
    };
    expect(rolloutState(d(quota))).toEqual({ status: 'failed', reason: 'exceeded quota' });
  });
});

describe('git read credential expiry', () => {
  it('is the same within half a lifetime, and at least half a lifetime away', () => {
    const ttl = 3600;
    const t0 = Date.UTC(2026, 10, 28, 12, 0, 0);
    const a = credentialExpiry(ttl, t0);
    expect(credentialExpiry(ttl, t0 + 29 * 60_000)).toEqual(a);
    expect(a.getTime() - (t0 + 29 * 60_000)).toBeGreaterThanOrEqual((ttl / 2) * 1000);
    expect(a.getTime() - t0).toBeLessThanOrEqual(ttl * 1000);
    expect(credentialExpiry(ttl, t0 + 30 * 60_000).getTime()).toBe(a.getTime() + 30 * 60_000);
  });
});
