import fs from 'node:fs';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import {
  FAKE_USER,
  NAMESPACE,
  startKubernetesFake,
  type KubeObject,
  type KubernetesFake,
} from '../support/kubernetes-fake.js';
import { KUBERNETES_FIXTURES, manifestKinds, validateManifest } from '../support/kubernetes-schemas.js';

/**
 * The loopback Kubernetes API server (test/support/kubernetes-fake.ts) through the real
 * `@kubernetes/client-node` client, and the manifest checks it applies
 * (test/support/kubernetes-schemas.ts, Kubernetes' own schemas in test/fixtures/kubernetes).
 */

const MANAGER = 'analytics-platform-api';
const LABELS = {
  'app.kubernetes.io/managed-by': MANAGER,
  'app.kubernetes.io/name': 'cube',
  deployment: '7',
  source: 'production',
  environment: '3',
};

const json = (v: KubeObject): KubeObject => JSON.parse(JSON.stringify(v)) as KubeObject;

function deployment(
  name = 'cube-7',
  spec: KubeObject = {},
  labels: Record<string, string> = LABELS,
): KubeObject {
  // A JSON copy: no object shared between its fields (the labels are in two places).
  return json({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE, labels },
    spec: {
      replicas: 2,
      progressDeadlineSeconds: 600,
      revisionHistoryLimit: 3,
      selector: { matchLabels: { environment: labels.environment } },
      template: {
        metadata: { labels, annotations: { 'analytics-platform/commit': 'abc123' } },
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
          initContainers: [
            {
              name: 'fetch-model',
              image: 'alpine/git:2.47.2',
              command: ['/bin/sh', '-ec', 'git init'],
              env: [
                { name: 'HOME', value: '/tmp' },
                {
                  name: 'GIT_CONFIG_VALUE_0',
                  valueFrom: { secretKeyRef: { name: `${name}-git`, key: 'GIT_CONFIG_VALUE_0' } },
                },
              ],
              volumeMounts: [
                { name: 'model', mountPath: '/cube/conf' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          containers: [
            {
              name: 'cubejs-server',
              image: 'cubejs/cube:v1.3.0',
              envFrom: [{ secretRef: { name: `${name}-env` } }],
              ports: [{ name: 'http', containerPort: 4000 }],
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' } },
              livenessProbe: { httpGet: { path: '/livez', port: 'http' } },
              resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: 2, memory: '2Gi' } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'model', mountPath: '/cube/conf' }],
            },
          ],
          volumes: [
            { name: 'model', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
      ...spec,
    },
  });
}

const service = (name = 'cube-7'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NAMESPACE, labels: { ...LABELS } },
  spec: {
    type: 'ClusterIP',
    selector: { environment: '3' },
    ports: [{ name: 'http', port: 4000, targetPort: 'http' }],
  },
});

const secret = (name = 'cube-7-env', extra: KubeObject = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NAMESPACE, labels: { ...LABELS } },
  type: 'Opaque',
  ...extra,
});

const networkPolicy = (name = 'cube-7'): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name, namespace: NAMESPACE, labels: { ...LABELS } },
  spec: {
    podSelector: { matchLabels: { environment: '3' } },
    policyTypes: ['Ingress', 'Egress'],
    ingress: [
      {
        from: [
          {
            namespaceSelector: {},
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'analytics-platform-api' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 4000 }],
      },
    ],
    egress: [
      {
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
      { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10'] } }] },
      { to: [{ ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10', '::1/128'] } }] },
    ],
  },
});

/** Polls `check` until it holds, a bounded number of times (no test waits on time itself). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}

/** The API server's refusal of a call: its HTTP status and `Status` body. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; body: KubeObject }> {
  try {
    await call;
  } catch (e) {
    if (e instanceof k8s.ApiException) {
      const body = e.body as unknown;
      return { code: e.code, body: (typeof body === 'string' ? JSON.parse(body) : body) as KubeObject };
    }
    throw e;
  }
  throw new Error('the call was not refused');
}

describe('Kubernetes manifests checked against Kubernetes’ own schemas', () => {
  const valid: KubeObject[] = [
    deployment(),
    service(),
    secret('cube-7-env', { data: { PORT: Buffer.from('4000').toString('base64') } }),
    networkPolicy(),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'analytics' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'platform', namespace: 'analytics' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { 'app.yaml': 'a: 1' } },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'postgres', creationTimestamp: null },
      spec: {
        serviceName: 'postgres',
        replicas: 1,
        selector: { matchLabels: { app: 'postgres' } },
        template: {
          metadata: { labels: { app: 'postgres' } },
          spec: {
            containers: [{ name: 'postgres', image: 'postgres:17', ports: [{ containerPort: 5432 }] }],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: 1073741824 } } },
          },
        ],
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'analytics-platform:deployments', namespace: 'analytics' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'patch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'analytics-platform' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'analytics-platform:deployments',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'platform', namespace: 'analytics' }],
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'migrate', image: 'api:1', args: ['migrate'] }],
          },
        },
      },
    },
  ];

  it('covers the kinds the service writes and the example manifests use, and passes valid ones', () => {
    expect(manifestKinds().sort()).toEqual([
      'apps/v1/Deployment',
      'apps/v1/StatefulSet',
      'batch/v1/Job',
      'networking.k8s.io/v1/NetworkPolicy',
      'rbac.authorization.k8s.io/v1/Role',
      'rbac.authorization.k8s.io/v1/RoleBinding',
      'v1/ConfigMap',
      'v1/Namespace',
      'v1/PersistentVolumeClaim',
      'v1/Secret',
      'v1/Service',
      'v1/ServiceAccount',
    ]);
    for (const manifest of valid) {
      expect({ kind: manifest.kind, problems: validateManifest(manifest) }).toEqual({
        kind: manifest.kind,
        problems: [],
      });
    }
  });

  it('refuses unknown fields (fieldValidation=Strict), wrong types and missing required fields', () => {
    const d = deployment();
    d.spec.replica = 2;
    d.spec.template.spec.containers[0].ports[0].containerPort = '4000';
    d.spec.template.spec.containers[0].imagePullSecrets = [{ name: 'x' }];
    delete d.spec.template.spec.containers[0].name;
    expect(validateManifest(d)).toEqual([
      'spec.replica: field not declared in schema',
      'spec.template.spec.containers[0].name: Required value',
      'spec.template.spec.containers[0].imagePullSecrets: field not declared in schema',
      'spec.template.spec.containers[0].ports[0].containerPort: Invalid value: "4000": must be of type integer',
    ]);
  });

  it('takes int-or-string fields and quantities in both forms, and checks quantities’ syntax', () => {
    const d = deployment('cube-7', { strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } } });
    d.spec.template.spec.containers[0].resources = { limits: { cpu: 0.5, memory: '2Gi' } };
    d.spec.template.spec.containers[0].readinessProbe.httpGet.port = 4000;
    expect(validateManifest(d)).toEqual([]);
    d.spec.template.spec.containers[0].resources.limits.memory = '2 GB';
    d.spec.strategy.rollingUpdate.maxSurge = true;
    expect(validateManifest(d)).toEqual([
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: true: must be of type integer or string',
      expect.stringMatching(
        /^spec\.template\.spec\.containers\[0\]\.resources\.limits\.memory: Invalid value: "2 GB": quantities must match/,
      ),
    ]);
  });

  it('applies the API server’s name, label and key rules', () => {
    expect(validateManifest({ ...service('7-cube') })).toEqual([
      expect.stringMatching(/^metadata\.name: Invalid value: "7-cube": a DNS-1035 label must consist of/),
    ]);
    expect(validateManifest(deployment('Cube_7'))).toEqual([
      expect.stringMatching(/^metadata\.name: Invalid value: "Cube_7": a lowercase RFC 1123 subdomain/),
    ]);
    expect(validateManifest(deployment('cube-7.example'))).toEqual([]);
    const long = 'b'.repeat(64);
    expect(validateManifest(deployment('cube-7', {}, { ...LABELS, branch: long, 'bad key!': 'x' }))).toEqual(
      expect.arrayContaining([
        `metadata.labels: Invalid value: "${long}": must be no more than 63 characters`,
        expect.stringMatching(/^metadata\.labels: Invalid value: "bad key!": name part must consist of/),
        `spec.template.metadata.labels: Invalid value: "${long}": must be no more than 63 characters`,
      ]),
    );
    expect(validateManifest(deployment('cube-7', {}, { ...LABELS, branch: 'feature/x' }))).toEqual([
      expect.stringMatching(
        /^metadata\.labels: Invalid value: "feature\/x": a valid label must be an empty string/,
      ),
      expect.stringMatching(/^spec\.template\.metadata\.labels: Invalid value: "feature\/x"/),
    ]);
    expect(validateManifest(secret('s', { data: { PORT: '4000!' }, stringData: { 'a b': 'x' } }))).toEqual([
      'data.PORT: Invalid value: "4000!": must be a base64-encoded string',
      expect.stringMatching(/^stringData: Invalid value: "a b": a valid config key must consist/),
    ]);
    const role = valid.find((v) => v.kind === 'Role')!;
    expect(validateManifest({ ...role, metadata: { name: 'a/b' } })).toEqual([
      `metadata.name: Invalid value: "a/b": may not contain '/'`,
    ]);
  });

  it('applies the kinds’ own rules: selectors, container and port names, mounts, CIDRs', () => {
    const d = deployment('cube-7', { selector: { matchLabels: { environment: '4' } } });
    d.spec.template.spec.containers[0].ports[0].name = 'http-port-for-cube';
    d.spec.template.spec.containers[0].volumeMounts.push({ name: 'cache', mountPath: '/cache' });
    d.spec.template.spec.containers.push({ name: 'fetch-model', image: 'x' });
    expect(validateManifest(d)).toEqual([
      'spec.template.metadata.labels: Invalid value: ' +
        JSON.stringify(LABELS) +
        ': `selector` does not match template `labels`',
      'spec.template.spec.containers[0].ports[0].name: Invalid value: "http-port-for-cube": must be no more than 15 characters',
      'spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"',
      'spec.template.spec.containers[1].name: Duplicate value: "fetch-model"',
    ]);
    const np = networkPolicy();
    np.spec.egress[1].to[0].ipBlock.except.push('fc00::/7', '10.0.0.1/8');
    np.spec.egress.push({ to: [{}] });
    expect(validateManifest(np)).toEqual([
      'spec.egress[1].to[0].ipBlock.except[3]: Invalid value: "fc00::/7": must be a strict subset of `cidr`',
      'spec.egress[1].to[0].ipBlock.except[4]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length',
      'spec.egress[3].to[0]: Required value: must specify a peer',
    ]);
    const env = deployment();
    env.spec.template.spec.initContainers[0].env.push({ name: 'HOME', value: '/root' });
    expect(validateManifest(env)).toEqual([
      'spec.template.spec.initContainers[0].env[2]: Duplicate value: {"name":"HOME"}',
    ]);
  });

  it('names an unknown kind or a missing apiVersion instead of passing it', () => {
    expect(validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })).toEqual([
      expect.stringMatching(/^kind: Unsupported value: "v1\/Pod": no schema for this kind/),
    ]);
    expect(validateManifest({ apiVersion: 'apps/v1beta1', kind: 'Deployment' })).toEqual([
      expect.stringMatching(/^kind: Unsupported value: "apps\/v1beta1\/Deployment"/),
    ]);
    expect(validateManifest({ kind: 'Deployment' })).toEqual([
      expect.stringMatching(/^apiVersion: Required value/),
    ]);
    expect(validateManifest('kind: Deployment')).toEqual(['a manifest must be an object']);
  });

  it('keeps only the definitions reachable from the kinds, each $ref resolving', () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(KUBERNETES_FIXTURES, 'schemas.json'), 'utf8')) as {
      kinds: Record<string, string>;
      definitions: Record<string, unknown>;
    };
    const reached = new Set<string>();
    const visit = (name: string) => {
      if (reached.has(name)) return;
      expect(fixture.definitions).toHaveProperty([name]);
      reached.add(name);
      for (const ref of JSON.stringify(fixture.definitions[name]).matchAll(/"#\/definitions\/([^"]+)"/g)) {
        visit(ref[1]);
      }
    };
    Object.values(fixture.kinds).forEach(visit);
    expect([...reached].sort()).toEqual(Object.keys(fixture.definitions).sort());
    expect(JSON.stringify(fixture)).not.toContain('"description"');
  });
});

describe('the Kubernetes fake through @kubernetes/client-node', () => {
  let fake: KubernetesFake;
  let kc: k8s.KubeConfig;
  let apps: k8s.AppsV1Api;
  let core: k8s.CoreV1Api;
  let networking: k8s.NetworkingV1Api;
  const SSA = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

  beforeAll(async () => {
    fake = await startKubernetesFake();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(fake.kubeconfig({ namespace: NAMESPACE, skipTlsVerify: true }));
    apps = kc.makeApiClient(k8s.AppsV1Api);
    core = kc.makeApiClient(k8s.CoreV1Api);
    networking = kc.makeApiClient(k8s.NetworkingV1Api);
  });
  beforeEach(() => {
    fake.clear();
    fake.reset();
  });
  // Every apply of a test is valid unless the test says otherwise (and then empties the record).
  afterEach(() => expect(fake.invalid).toEqual([]));
  afterAll(() => fake.close());

  const applyDeployment = (body: KubeObject, options: { force?: boolean; fieldManager?: string } = {}) =>
    apps.patchNamespacedDeploymentWithHttpInfo(
      {
        name: body.metadata.name,
        namespace: NAMESPACE,
        body,
        fieldManager: options.fieldManager ?? MANAGER,
        fieldValidation: 'Strict',
        force: options.force ?? true,
      },
      SSA,
    );

  describe('server-side apply', () => {
    it('creates (201) then updates (200), with the server’s metadata, defaults and managedFields', async () => {
      const created = await applyDeployment(deployment());
      expect(created.httpStatusCode).toBe(201);
      const live = fake.get('Deployment', 'cube-7')!;
      expect(live.metadata).toMatchObject({
        name: 'cube-7',
        namespace: NAMESPACE,
        uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        creationTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        resourceVersion: expect.stringMatching(/^\d+$/),
        generation: 1,
        managedFields: [
          {
            manager: MANAGER,
            operation: 'Apply',
            apiVersion: 'apps/v1',
            time: expect.any(String),
            fieldsType: 'FieldsV1',
            fieldsV1: expect.objectContaining({ 'f:spec': expect.objectContaining({ 'f:replicas': {} }) }),
          },
        ],
      });
      expect(live.status).toEqual({});
      expect(live.spec.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
      });
      expect(live.spec.template.spec.containers[0]).toMatchObject({
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        ports: [{ name: 'http', containerPort: 4000, protocol: 'TCP' }],
      });
      expect(created.data.metadata?.uid).toBe(live.metadata.uid);
      expect(fake.requests).toEqual([
        {
          method: 'PATCH',
          path: `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/cube-7`,
          query: { fieldManager: MANAGER, fieldValidation: 'Strict', force: 'true' },
          auth: 'ok',
          contentType: 'application/apply-patch+yaml',
          body: deployment(),
        },
      ]);

      // The same configuration again writes nothing.
      const same = await applyDeployment(deployment());
      expect(same.httpStatusCode).toBe(200);
      expect(fake.get('Deployment', 'cube-7')!.metadata.resourceVersion).toBe(live.metadata.resourceVersion);

      // A change of spec is a new generation; labels are not.
      await applyDeployment(deployment('cube-7', { replicas: 3 }));
      const scaled = fake.get('Deployment', 'cube-7')!;
      expect(scaled.metadata.generation).toBe(2);
      expect(Number(scaled.metadata.resourceVersion)).toBeGreaterThan(Number(live.metadata.resourceVersion));
      const labelled = deployment('cube-7', { replicas: 3 });
      labelled.metadata.labels.branch = 'main';
      await applyDeployment(labelled);
      expect(fake.get('Deployment', 'cube-7')!.metadata).toMatchObject({
        generation: 2,
        labels: { branch: 'main' },
      });
    });

    it('removes the fields the manager no longer applies, and takes YAML bodies', async () => {
      await applyDeployment(deployment('cube-7', {}, { ...LABELS, branch: 'main' }));
      const d = deployment();
      delete d.spec.replicas;
      await applyDeployment(d);
      const live = fake.get('Deployment', 'cube-7')!;
      expect(live.metadata.labels).toEqual(LABELS);
      expect(live.spec.replicas).toBe(1); // the default again
      expect(live.spec.template.metadata.labels).toEqual(LABELS);

      const yaml = [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        '  name: cube-7-git',
        'stringData:',
        '  GIT_CONFIG_VALUE_0: "Authorization: Basic abc"',
        '',
      ].join('\n');
      const res = await fetch(
        `${fake.url}/api/v1/namespaces/${NAMESPACE}/secrets/cube-7-git?fieldManager=${MANAGER}`,
        {
          method: 'PATCH',
          headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/apply-patch+yaml' },
          body: yaml,
        },
      );
      expect(res.status).toBe(201);
      expect(fake.get('Secret', 'cube-7-git')!.data).toEqual({
        GIT_CONFIG_VALUE_0: Buffer.from('Authorization: Basic abc').toString('base64'),
      });
    });

    it('merges a Secret’s stringData into data (base64), never returning it', async () => {
      const body = secret('cube-7-env', {
        data: { PORT: Buffer.from('4000').toString('base64') },
        stringData: { A: 'é' },
      });
      const res = await core.patchNamespacedSecretWithHttpInfo(
        { name: 'cube-7-env', namespace: NAMESPACE, body, fieldManager: MANAGER, force: true },
        SSA,
      );
      expect(res.httpStatusCode).toBe(201);
      expect(res.data.data).toEqual({ PORT: 'NDAwMA==', A: Buffer.from('é').toString('base64') });
      const live = fake.get('Secret', 'cube-7-env')!;
      expect(live).not.toHaveProperty('stringData');
      expect(live.type).toBe('Opaque');
      expect(live.metadata).not.toHaveProperty('generation');
      // Dropping a key drops it from data.
      await core.patchNamespacedSecret(
        {
          name: 'cube-7-env',
          namespace: NAMESPACE,
          body: secret('cube-7-env', { stringData: { A: 'é' } }),
          fieldManager: MANAGER,
        },
        SSA,
      );
      expect(fake.get('Secret', 'cube-7-env')!.data).toEqual({ A: Buffer.from('é').toString('base64') });
    });

    it('allocates a Service its cluster IP and defaults, and keeps them across applies', async () => {
      await core.patchNamespacedService(
        { name: 'cube-7', namespace: NAMESPACE, body: service(), fieldManager: MANAGER, force: true },
        SSA,
      );
      const live = fake.get('Service', 'cube-7')!;
      expect(live.spec).toMatchObject({
        clusterIP: expect.stringMatching(/^10\.96\./),
        sessionAffinity: 'None',
        ports: [{ name: 'http', port: 4000, targetPort: 'http', protocol: 'TCP' }],
      });
      expect(live.status).toEqual({ loadBalancer: {} });
      await core.patchNamespacedService(
        { name: 'cube-7', namespace: NAMESPACE, body: service(), fieldManager: MANAGER, force: true },
        SSA,
      );
      expect(fake.get('Service', 'cube-7')!.metadata.resourceVersion).toBe(live.metadata.resourceVersion);
      expect(
        (await core.readNamespacedService({ name: 'cube-7', namespace: NAMESPACE })).spec?.clusterIP,
      ).toBe(live.spec.clusterIP);
    });

    it('applies NetworkPolicies, with a generation', async () => {
      const res = await networking.patchNamespacedNetworkPolicyWithHttpInfo(
        { name: 'cube-7', namespace: NAMESPACE, body: networkPolicy(), fieldManager: MANAGER, force: true },
        SSA,
      );
      expect(res.httpStatusCode).toBe(201);
      expect(fake.get('NetworkPolicy', 'cube-7')!.metadata.generation).toBe(1);
      expect(res.data.spec?.egress?.[1].to?.[0].ipBlock?.except).toContain('169.254.0.0/16');
    });

    it('refuses an invalid manifest with 422 Invalid and its causes, recording it', async () => {
      // Decoding first (unknown fields, types), then the kind's validation (names, labels...).
      const d = deployment('refused');
      d.spec.template.spec.containers[0].env = [
        { name: 'A', valueFrom: { secretKeyRef: { name: 'x', key: 'y' } }, extra: 1 },
      ];
      d.metadata.labels.branch = 'feature/x';
      const decoding = await refusal(applyDeployment(d));
      expect(decoding).toEqual({
        code: 422,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message:
            'Deployment.apps "refused" is invalid: spec.template.spec.containers[0].env[0].extra: field not declared in schema',
          reason: 'Invalid',
          details: {
            name: 'refused',
            group: 'apps',
            kind: 'Deployment',
            causes: [
              {
                reason: 'FieldValueInvalid',
                message: 'field not declared in schema',
                field: 'spec.template.spec.containers[0].env[0].extra',
              },
            ],
          },
          code: 422,
        },
      });
      delete d.spec.template.spec.containers[0].env[0].extra;
      const validation = await refusal(applyDeployment(d));
      expect(validation.body.message).toMatch(
        /^Deployment\.apps "refused" is invalid: metadata\.labels: Invalid value: "feature\/x": a valid label/,
      );
      expect(validation.body.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          message: expect.stringContaining('"feature/x"'),
          field: 'metadata.labels',
        },
      ]);
      expect(fake.invalid).toEqual([
        {
          kind: 'Deployment',
          namespace: NAMESPACE,
          name: 'refused',
          fieldManager: MANAGER,
          problems: ['spec.template.spec.containers[0].env[0].extra: field not declared in schema'],
        },
        expect.objectContaining({
          name: 'refused',
          problems: [expect.stringMatching(/^metadata\.labels: Invalid value: "feature\/x"/)],
        }),
      ]);
      expect(fake.get('Deployment', 'refused')).toBeUndefined();
      fake.invalid = [];
    });

    it('refuses what the API server refuses before applying', async () => {
      // No field manager: PatchOptions are invalid (422, as the API server answers).
      const noManager = await refusal(
        apps.patchNamespacedDeployment({ name: 'cube-7', namespace: NAMESPACE, body: deployment() }, SSA),
      );
      expect(noManager).toMatchObject({
        code: 422,
        body: {
          reason: 'Invalid',
          message:
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        },
      });
      const wrongName = await refusal(
        apps.patchNamespacedDeployment(
          { name: 'cube-8', namespace: NAMESPACE, body: deployment(), fieldManager: MANAGER },
          SSA,
        ),
      );
      expect(wrongName).toMatchObject({
        code: 400,
        body: {
          reason: 'BadRequest',
          message: 'the name of the object (cube-7) does not match the name on the URL (cube-8)',
        },
      });
      const wrongKind = await refusal(
        core.patchNamespacedService(
          { name: 'cube-7', namespace: NAMESPACE, body: deployment(), fieldManager: MANAGER },
          SSA,
        ),
      );
      expect(wrongKind.code).toBe(400);
      const wrongNamespace = await refusal(
        apps.patchNamespacedDeployment(
          { name: 'cube-7', namespace: 'other', body: deployment(), fieldManager: MANAGER },
          SSA,
        ),
      );
      expect(wrongNamespace.body.message).toBe(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
      // A merge patch is not served: the fake only speaks server-side apply.
      const merge = await refusal(
        apps.patchNamespacedDeployment(
          { name: 'cube-7', namespace: NAMESPACE, body: { spec: { replicas: 1 } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ),
      );
      expect(merge.code).toBe(415);
      expect(fake.objects()).toEqual([]);
    });

    it('refuses a change of an immutable Deployment selector', async () => {
      await applyDeployment(deployment());
      const moved = deployment('cube-7', {}, { ...LABELS, environment: '4' });
      const { code, body } = await refusal(applyDeployment(moved));
      expect(code).toBe(422);
      expect(body.details.causes).toContainEqual({
        reason: 'FieldValueInvalid',
        message: 'Invalid value: {"matchLabels":{"environment":"4"}}: field is immutable',
        field: 'spec.selector',
      });
      fake.invalid = [];
    });
  });

  describe('field ownership between managers', () => {
    it('answers 409 FieldManagerConflict for a field another manager set, changing nothing; force takes it over', async () => {
      await applyDeployment(deployment());
      const scale = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'cube-7' },
        spec: { replicas: 5 },
      };
      // kubectl meets our field too, and takes it (`kubectl apply --server-side --force-conflicts`).
      expect(fake.applyAs('kubectl', scale)).toMatchObject({ code: 409, body: { reason: 'Conflict' } });
      expect(fake.applyAs('kubectl', scale, { force: true }).code).toBe(200);
      const before = fake.get('Deployment', 'cube-7')!;
      expect(before.spec.replicas).toBe(5);

      const { code, body } = await refusal(applyDeployment(deployment(), { force: false }));
      expect(code).toBe(409);
      expect(body).toMatchObject({
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
        details: {
          causes: [
            { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' },
          ],
        },
      });
      expect(fake.get('Deployment', 'cube-7')).toEqual(before);

      // The same value is no conflict: the field is shared.
      expect(
        (await applyDeployment(deployment('cube-7', { replicas: 5 }), { force: false })).httpStatusCode,
      ).toBe(200);
      // Forced, the applier takes it; kubectl, left with nothing, leaves managedFields.
      await applyDeployment(deployment('cube-7', { replicas: 2 }), { force: true });
      const after = fake.get('Deployment', 'cube-7')!;
      expect(after.spec.replicas).toBe(2);
      expect(after.metadata.managedFields.map((f: KubeObject) => f.manager)).toEqual([MANAGER]);
    });

    it('keeps the fields another manager owns alongside the applier’s', async () => {
      await applyDeployment(deployment());
      fake.applyAs('kubectl-rollout', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'cube-7' },
        spec: {
          template: {
            metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-03-01T00:00:00Z' } },
          },
        },
      });
      await applyDeployment(deployment('cube-7', { replicas: 4 }));
      const live = fake.get('Deployment', 'cube-7')!;
      expect(live.spec.template.metadata.annotations).toEqual({
        'analytics-platform/commit': 'abc123',
        'kubectl.kubernetes.io/restartedAt': '2026-03-01T00:00:00Z',
      });
      expect(live.metadata.managedFields.map((f: KubeObject) => f.manager)).toEqual([
        MANAGER,
        'kubectl-rollout',
      ]);
    });

    it('reports a conflict before validating the merged object, as the API server does', async () => {
      const theirs = deployment('cube-7', {}, { ...LABELS, environment: '9' });
      expect(fake.applyAs('kubectl', theirs).code).toBe(201);
      const unforced = await refusal(applyDeployment(deployment(), { force: false }));
      expect(unforced.code).toBe(409);
      expect(unforced.body.details.causes.map((c: KubeObject) => c.field)).toContain('.spec.selector');
      // Forced, the merged object is validated: the selector of a Deployment is immutable.
      const forced = await refusal(applyDeployment(deployment(), { force: true }));
      expect(forced.code).toBe(422);
      expect(forced.body.details.causes.map((c: KubeObject) => c.field)).toEqual(['spec.selector']);
      fake.invalid = [];
    });

    it('conflicts on someone else’s object of the same name, atomic maps and lists whole', async () => {
      const theirs = service();
      theirs.metadata.labels = { app: 'theirs' };
      theirs.spec.selector = { app: 'theirs' };
      theirs.spec.ports = [{ name: 'web', port: 80 }];
      expect(fake.applyAs('helm', theirs).code).toBe(201);
      const { code, body } = await refusal(
        core.patchNamespacedService(
          { name: 'cube-7', namespace: NAMESPACE, body: service(), fieldManager: MANAGER, force: false },
          SSA,
        ),
      );
      expect(code).toBe(409);
      // New label keys are no conflict; the selector (an atomic map) and the ports (a list) are.
      expect(body.message).toBe(
        'Apply failed with 2 conflicts: conflict with "helm": .spec.ports\nconflict with "helm": .spec.selector',
      );
      expect(body.details.causes.map((c: KubeObject) => c.field)).toEqual(['.spec.ports', '.spec.selector']);
      expect(fake.get('Service', 'cube-7')!.spec.selector).toEqual({ app: 'theirs' });
    });
  });

  describe('reads', () => {
    beforeEach(async () => {
      await applyDeployment(deployment('cube-7'));
      await applyDeployment(deployment('cube-7-env-4', {}, { ...LABELS, source: 'dev', environment: '4' }));
      await applyDeployment(deployment('cube-8', {}, { ...LABELS, deployment: '8', environment: '5' }));
    });

    it('reads one (404 NotFound with the API server’s message for a missing one)', async () => {
      expect(
        (await apps.readNamespacedDeployment({ name: 'cube-7', namespace: NAMESPACE })).metadata?.name,
      ).toBe('cube-7');
      expect(
        (await apps.readNamespacedDeploymentStatus({ name: 'cube-7', namespace: NAMESPACE })).status,
      ).toEqual({});
      const missing = await refusal(apps.readNamespacedDeployment({ name: 'x', namespace: NAMESPACE }));
      expect(missing).toEqual({
        code: 404,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'deployments.apps "x" not found',
          reason: 'NotFound',
          details: { name: 'x', group: 'apps', kind: 'deployments' },
          code: 404,
        },
      });
      expect(
        (await refusal(core.readNamespacedSecret({ name: 'x', namespace: NAMESPACE }))).body.message,
      ).toBe('secrets "x" not found');
    });

    it('lists by label and field selector, with the list’s resourceVersion', async () => {
      const names = async (query: { labelSelector?: string; fieldSelector?: string }) =>
        (await apps.listNamespacedDeployment({ namespace: NAMESPACE, ...query })).items.map(
          (d) => d.metadata?.name,
        );
      expect(await names({})).toEqual(['cube-7', 'cube-7-env-4', 'cube-8']);
      expect(await names({ labelSelector: `app.kubernetes.io/managed-by=${MANAGER},deployment=7` })).toEqual([
        'cube-7',
        'cube-7-env-4',
      ]);
      expect(await names({ labelSelector: 'deployment=7,source in (dev)' })).toEqual(['cube-7-env-4']);
      expect(await names({ fieldSelector: 'metadata.name=cube-8' })).toEqual(['cube-8']);
      const list = await apps.listNamespacedDeployment({ namespace: NAMESPACE });
      expect(list.metadata?.resourceVersion).toBe(fake.resourceVersion());
      expect((await apps.listNamespacedDeployment({ namespace: 'other' })).items).toEqual([]);
      expect(
        (
          await refusal(
            apps.listNamespacedDeployment({ namespace: NAMESPACE, fieldSelector: 'spec.replicas=1' }),
          )
        ).code,
      ).toBe(400);
    });
  });

  describe('delete', () => {
    it('deletes (200 Success), 404 when missing; a Deployment’s pods go with it unless orphaned', async () => {
      await applyDeployment(deployment('cube-7'));
      await applyDeployment(deployment('cube-7-env-4', {}, { ...LABELS, environment: '4' }));
      fake.setRollout('cube-7', 'available');
      fake.setRollout('cube-7-env-4', 'available');
      expect(fake.pods).toHaveLength(4);
      const status = await apps.deleteNamespacedDeployment({
        name: 'cube-7',
        namespace: NAMESPACE,
        propagationPolicy: 'Background',
      });
      expect(status).toMatchObject({
        status: 'Success',
        details: { name: 'cube-7', group: 'apps', kind: 'deployments' },
      });
      expect(fake.get('Deployment', 'cube-7')).toBeUndefined();
      expect(fake.pods.map((p) => p.name)).toEqual([
        expect.stringMatching(/^cube-7-env-4-[a-z0-9]+-0$/),
        expect.stringMatching(/-1$/),
      ]);
      expect(
        (await refusal(apps.deleteNamespacedDeployment({ name: 'cube-7', namespace: NAMESPACE }))).code,
      ).toBe(404);
      await apps.deleteNamespacedDeployment({
        name: 'cube-7-env-4',
        namespace: NAMESPACE,
        propagationPolicy: 'Orphan',
      });
      expect(fake.pods).toHaveLength(2);
      expect(
        fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.query.propagationPolicy),
      ).toEqual(['Background', undefined, 'Orphan']);
    });
  });

  describe('rollouts', () => {
    it('moves a Deployment’s status as the deployment controller does', async () => {
      await applyDeployment(deployment());
      const progressing = fake.setRollout('cube-7', 'progressing');
      expect(progressing.status).toEqual({
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 0,
        availableReplicas: 0,
        unavailableReplicas: 2,
        conditions: [
          expect.objectContaining({
            type: 'Available',
            status: 'False',
            reason: 'MinimumReplicasUnavailable',
          }),
          expect.objectContaining({
            type: 'Progressing',
            status: 'True',
            reason: 'ReplicaSetUpdated',
            message: expect.stringMatching(/^ReplicaSet "cube-7-[a-z0-9]+" is progressing\.$/),
          }),
        ],
      });
      expect(fake.pods).toEqual([]);

      const available = fake.setRollout('cube-7', 'available');
      expect(available.status).toMatchObject({
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        conditions: [
          expect.objectContaining({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }),
          expect.objectContaining({ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }),
        ],
      });
      expect(
        available.metadata.managedFields.map((f: KubeObject) => [f.manager, f.operation, f.subresource]),
      ).toEqual([
        [MANAGER, 'Apply', undefined],
        ['kube-controller-manager', 'Update', 'status'],
      ]);
      const pods = await core.listNamespacedPod({
        namespace: NAMESPACE,
        labelSelector: 'deployment=7,source=production',
      });
      const first = pods.items.map((p) => p.metadata?.name);
      expect(first).toEqual([
        expect.stringMatching(/^cube-7-[a-z0-9]+-0$/),
        expect.stringMatching(/^cube-7-[a-z0-9]+-1$/),
      ]);
      expect(pods.items[0].metadata?.labels).toMatchObject({
        ...LABELS,
        'pod-template-hash': expect.any(String),
      });
      expect(pods.items[0].metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet' });
      expect(pods.items[0].spec?.containers.map((c) => [c.name, c.image])).toEqual([
        ['cubejs-server', 'cubejs/cube:v1.3.0'],
      ]);
      expect(pods.items[0].spec?.initContainers?.map((c) => c.name)).toEqual(['fetch-model']);
      expect(
        await core.readNamespacedPodLog({
          name: first[0]!,
          namespace: NAMESPACE,
          container: 'cubejs-server',
        }),
      ).toBe('');

      // A new template: generation 2, the status behind until the controller moves it.
      await applyDeployment(deployment('cube-7', {}, { ...LABELS, branch: 'next' }));
      const behind = fake.get('Deployment', 'cube-7')!;
      expect([behind.metadata.generation, behind.status.observedGeneration]).toEqual([2, 1]);
      const failed = fake.setRollout('cube-7', 'failed', {
        message: 'ReplicaSet "x" has timed out progressing.',
        replicaFailure: 'pods "x" is forbidden: exceeded quota',
      });
      expect(failed.status).toMatchObject({
        observedGeneration: 2,
        replicas: 3,
        updatedReplicas: 1,
        availableReplicas: 2,
        conditions: [
          expect.objectContaining({ type: 'Available', status: 'True' }),
          expect.objectContaining({
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "x" has timed out progressing.',
          }),
          expect.objectContaining({
            type: 'ReplicaFailure',
            status: 'True',
            reason: 'FailedCreate',
            message: 'pods "x" is forbidden: exceeded quota',
          }),
        ],
      });
      fake.setRollout('cube-7', 'available');
      const second = fake.pods.map((p) => p.name);
      expect(second).toHaveLength(2);
      expect(second).not.toEqual(first);
      expect(fake.pods[0].labels.branch).toBe('next');
      expect(() => fake.setRollout('nope', 'available')).toThrow(/no Deployment analytics\/nope/);
    });
  });

  describe('watch', () => {
    type Event = { type: string; name: string; rv: string; object: KubeObject };
    /** A watch through the client's Watch: its events, and whether (and how) it ended. */
    async function watch(
      query: Record<string, string | number | boolean | undefined>,
      pathname = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
    ) {
      const events: Event[] = [];
      const ended: { done: boolean; error: unknown } = { done: false, error: null };
      const controller = await new k8s.Watch(kc).watch(
        pathname,
        query,
        (type, object: KubeObject) =>
          events.push({ type, name: object.metadata?.name, rv: object.metadata?.resourceVersion, object }),
        (err) => {
          ended.done = true;
          ended.error = err;
        },
      );
      return { events, ended, controller };
    }

    it('streams changes after the list’s resourceVersion, by selector, with chunked JSON lines', async () => {
      await applyDeployment(deployment('cube-8', {}, { ...LABELS, deployment: '8', environment: '5' }));
      const list = await apps.listNamespacedDeployment({
        namespace: NAMESPACE,
        labelSelector: 'deployment=7',
      });
      const w = await watch({
        labelSelector: 'deployment=7',
        resourceVersion: list.metadata?.resourceVersion,
      });
      await until(() => fake.watchers('Deployment') === 1, 'the watch is open');
      await applyDeployment(deployment());
      await applyDeployment(
        deployment('cube-8', { replicas: 3 }, { ...LABELS, deployment: '8', environment: '5' }),
      );
      fake.setRollout('cube-7', 'available');
      await apps.deleteNamespacedDeployment({ name: 'cube-7', namespace: NAMESPACE });
      await until(() => w.events.length === 3, 'three events');
      expect(w.events.map((e) => [e.type, e.name])).toEqual([
        ['ADDED', 'cube-7'],
        ['MODIFIED', 'cube-7'],
        ['DELETED', 'cube-7'],
      ]);
      expect(w.events[1].object.status.availableReplicas).toBe(2);
      expect(Number(w.events[2].rv)).toBeGreaterThan(Number(w.events[1].rv));
      w.controller.abort();
      await until(() => fake.watchers() === 0, 'the watch is closed');
      expect(fake.requests.find((r) => r.query.watch)?.query).toEqual({
        watch: 'true',
        labelSelector: 'deployment=7',
        resourceVersion: list.metadata?.resourceVersion,
      });
    });

    it('replays from a resourceVersion; with none, starts with the objects there are', async () => {
      await applyDeployment(deployment());
      const rv = fake.resourceVersion();
      fake.setRollout('cube-7', 'progressing');
      fake.setRollout('cube-7', 'available');
      const replay = await watch({ resourceVersion: rv, timeoutSeconds: 1 });
      await until(() => replay.ended.done, 'the watch ends after timeoutSeconds');
      expect(replay.ended.error).toBeNull();
      expect(replay.events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
      const fresh = await watch({ fieldSelector: 'metadata.name=cube-7', timeoutSeconds: 1 });
      await until(() => fresh.ended.done, 'the watch ends');
      expect(fresh.events.map((e) => [e.type, e.name, e.rv])).toEqual([
        ['ADDED', 'cube-7', fake.resourceVersion()],
      ]);
    });

    it('tells a watch it left or entered the selection, as the watch cache does', async () => {
      await applyDeployment(deployment());
      const w = await watch({ labelSelector: 'branch=main', resourceVersion: fake.resourceVersion() });
      await until(() => fake.watchers() === 1, 'the watch is open');
      await applyDeployment(deployment('cube-7', {}, { ...LABELS, branch: 'main' }));
      await applyDeployment(deployment('cube-7', {}, { ...LABELS, branch: 'next' }));
      await until(() => w.events.length === 2, 'two events');
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
      w.controller.abort();
    });

    it('answers a resourceVersion older than its history with 410 Expired, and sends bookmarks when allowed', async () => {
      await applyDeployment(deployment());
      const old = fake.resourceVersion();
      fake.setRollout('cube-7', 'available');
      fake.compact();
      const expired = await watch({ resourceVersion: old });
      await until(() => expired.ended.done, 'the expired watch ends');
      expect(expired.events).toEqual([
        {
          type: 'ERROR',
          name: undefined,
          rv: undefined,
          object: expect.objectContaining({
            code: 410,
            reason: 'Expired',
            message: expect.stringMatching(/^too old resource version/),
          }),
        },
      ]);
      const w = await watch({ resourceVersion: fake.resourceVersion(), allowWatchBookmarks: true });
      await until(() => fake.watchers() === 1, 'the watch is open');
      fake.bookmark();
      await until(() => w.events.length === 1, 'a bookmark');
      expect(w.events[0]).toMatchObject({ type: 'BOOKMARK', rv: fake.resourceVersion() });
      w.controller.abort();
    });

    it('ends open watches when the fake closes', async () => {
      const other = await startKubernetesFake();
      const config = new k8s.KubeConfig();
      config.loadFromFile(other.kubeconfig({ skipTlsVerify: true }));
      let ended = false;
      await new k8s.Watch(config).watch(
        `/api/v1/namespaces/${NAMESPACE}/secrets`,
        {},
        () => undefined,
        () => {
          ended = true;
        },
      );
      await until(() => other.watchers('Secret') === 1, 'the watch is open');
      await other.close();
      await until(() => ended, 'the watch ends');
    });
  });

  describe('refusals', () => {
    it('answers 403 with the authorizer’s message for a verb the service account lacks', async () => {
      fake.settings.deny = [{ verb: 'patch', resource: 'deployments' }];
      const patch = await refusal(applyDeployment(deployment()));
      expect(patch).toEqual({
        code: 403,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `deployments.apps "cube-7" is forbidden: User "${FAKE_USER}" cannot patch resource "deployments" in API group "apps" in the namespace "analytics"`,
          reason: 'Forbidden',
          details: { name: 'cube-7', group: 'apps', kind: 'deployments' },
          code: 403,
        },
      });
      // Creating by apply needs create too; updating needs patch only.
      fake.settings.deny = [{ verb: 'create', resource: 'deployments' }];
      expect((await refusal(applyDeployment(deployment()))).body.message).toContain(
        'cannot create resource "deployments"',
      );
      fake.settings.deny = [];
      await applyDeployment(deployment());
      fake.settings.deny = [{ verb: 'create', resource: 'deployments' }];
      expect((await applyDeployment(deployment('cube-7', { replicas: 3 }))).httpStatusCode).toBe(200);

      fake.settings.deny = [
        { verb: 'list', resource: 'secrets' },
        { verb: 'watch', resource: 'deployments' },
        { verb: 'get', resource: 'pods/log' },
      ];
      expect((await refusal(core.listNamespacedSecret({ namespace: NAMESPACE }))).body.message).toBe(
        `secrets is forbidden: User "${FAKE_USER}" cannot list resource "secrets" in API group "" in the namespace "analytics"`,
      );
      const w = await new Promise<unknown>((resolve) => {
        void new k8s.Watch(kc).watch(
          `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
          {},
          () => undefined,
          resolve,
        );
      });
      expect(w).toMatchObject({ statusCode: 403 });
      expect((await refusal(core.readNamespacedPodLog({ name: 'p', namespace: NAMESPACE }))).code).toBe(403);
      fake.reset();
      expect(fake.settings.deny).toEqual([]);
    });

    it('keeps failWith, hang and the token check on the new routes', async () => {
      fake.settings.failWith = 503;
      expect((await refusal(apps.listNamespacedDeployment({ namespace: NAMESPACE }))).code).toBe(503);
      fake.reset();
      const wrong = new k8s.KubeConfig();
      wrong.loadFromFile(fake.kubeconfig({ token: 'wrong', skipTlsVerify: true }));
      expect(
        (
          await refusal(
            wrong.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: 'x', namespace: NAMESPACE }),
          )
        ).code,
      ).toBe(401);
      fake.settings.hang = true;
      const controller = new AbortController();
      const hung = fetch(`${fake.url}/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, {
        headers: { authorization: `Bearer ${fake.token}` },
        signal: controller.signal,
      });
      await until(() => fake.requests.length === 2, 'the request arrives');
      controller.abort();
      await expect(hung).rejects.toThrow();
      expect(fake.requests.map((r) => r.auth)).toEqual(['wrong', 'ok']);
    });
  });
});
