import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import type { RuntimeLogLine } from '../../src/modules/deployment-runtime/deployment-runtime.js';
import {
  KubernetesConfigError,
  kubernetesTarget,
} from '../../src/modules/deployment-runtime/kubernetes-config.js';
import {
  afterPage,
  normalizeInstant,
  parsePodLog,
  sinceTimeOf,
  tailPage,
} from '../../src/modules/deployment-runtime/pod-logs.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-unit-'));
const messages = (lines: RuntimeLogLine[]) => lines.map((l) => `${l.pod}:${l.message}`);

describe('pod log lines', () => {
  it('normalizes kubelet timestamps to fixed-width UTC nanoseconds, so text order is time order', () => {
    expect(normalizeInstant('2026-01-15T10:00:00.123456789Z')).toBe('2026-01-15T10:00:00.123456789Z');
    expect(normalizeInstant('2026-01-15T10:00:00.1Z')).toBe('2026-01-15T10:00:00.100000000Z');
    expect(normalizeInstant('2026-01-15T10:00:00Z')).toBe('2026-01-15T10:00:00.000000000Z');
    expect(normalizeInstant('2026-01-15T12:00:00.5+02:00')).toBe('2026-01-15T10:00:00.500000000Z');
    expect(normalizeInstant('yesterday')).toBeNull();
    expect(normalizeInstant('2026-13-45T10:00:00Z')).toBeNull();
    expect(sinceTimeOf('2026-01-15T10:00:07.900000000Z')).toBe('2026-01-15T10:00:07Z');
  });

  it('splits `<timestamp> <message>` lines, numbering lines of one instant', () => {
    const text =
      '2026-01-15T10:00:00.100000000Z first line\n' +
      '2026-01-15T10:00:00.100000000Z  same instant, indented\n' +
      '2026-01-15T10:00:01.000000000Z\n' +
      '2026-01-15T10:00:02.000000000Z windows line\r\n';
    expect(parsePodLog('api-0', text, false)).toEqual([
      {
        date: '2026-01-15T10:00:00.100000000Z',
        pod: 'api-0',
        message: 'first line',
        position: { at: '2026-01-15T10:00:00.100000000Z', pod: 'api-0', seq: 0 },
      },
      {
        date: '2026-01-15T10:00:00.100000000Z',
        pod: 'api-0',
        message: ' same instant, indented',
        position: { at: '2026-01-15T10:00:00.100000000Z', pod: 'api-0', seq: 1 },
      },
      expect.objectContaining({ message: '', position: expect.objectContaining({ seq: 0 }) }),
      expect.objectContaining({ message: 'windows line' }),
    ]);
  });

  it('drops the line a byte limit cut, unless it is the only one', () => {
    const text = '2026-01-15T10:00:00.000000000Z whole\n2026-01-15T10:00:01.000000000Z cu';
    expect(messages(parsePodLog('p', text, true))).toEqual(['p:whole']);
    expect(messages(parsePodLog('p', text, false))).toEqual(['p:whole', 'p:cu']);
    expect(messages(parsePodLog('p', '2026-01-15T10:00:00.000000000Z very long li', true))).toEqual([
      'p:very long li',
    ]);
    expect(parsePodLog('p', '', false)).toEqual([]);
  });

  const read = (pod: string, entries: Array<[string, string]>, truncated = false) => ({
    lines: parsePodLog(pod, entries.map(([s, m]) => `2026-01-15T10:00:${s}Z ${m}\n`).join(''), false),
    truncated,
  });

  it('merges pods chronologically; the tail is the last lines, oldest first', () => {
    const reads = [
      read('b', [
        ['01.000000000', 'b1'],
        ['03.000000000', 'b3'],
      ]),
      read('a', [
        ['02.000000000', 'a2'],
        ['03.000000000', 'a3'],
        ['04.000000000', 'a4'],
      ]),
    ];
    expect(tailPage(reads, 10)).toEqual({
      lines: expect.any(Array),
      hasMore: false,
      hasEarlier: false,
    });
    expect(messages(tailPage(reads, 10).lines)).toEqual(['b:b1', 'a:a2', 'a:a3', 'b:b3', 'a:a4']);
    const two = tailPage(reads, 2);
    expect(messages(two.lines)).toEqual(['b:b3', 'a:a4']);
    expect(two.hasEarlier).toBe(true);
  });

  it('pages after a position, never past what a cut read has shown', () => {
    const after = { at: '2026-01-15T10:00:02.000000000Z', pod: 'a', seq: 0 };
    const whole = [
      read('a', [
        ['02.000000000', 'a2'],
        ['05.000000000', 'a5'],
      ]),
      read('b', [
        ['02.000000000', 'b2'],
        ['03.000000000', 'b3'],
      ]),
    ];
    expect(messages(afterPage(whole, after, 10).lines)).toEqual(['b:b2', 'b:b3', 'a:a5']);
    expect(afterPage(whole, after, 10).hasMore).toBe(false);
    expect(afterPage(whole, after, 2)).toMatchObject({ hasMore: true, hasEarlier: true });
    // b's read was cut after b3: a5 waits for the next page, which reads b on from b3.
    const cut = [whole[0], { ...whole[1], truncated: true }];
    expect(messages(afterPage(cut, after, 10).lines)).toEqual(['b:b2', 'b:b3']);
    expect(afterPage(cut, after, 10).hasMore).toBe(true);
    // A read cut before it reached `after` holds nothing back.
    const stuck = [whole[0], read('c', [['01.000000000', 'c1']], true)];
    expect(messages(afterPage(stuck, after, 10).lines)).toEqual(['a:a5']);
  });
});

describe('Kubernetes client configuration', () => {
  const kubeconfig = (dir: string, body: string) => {
    const file = path.join(dir, 'config');
    fs.writeFileSync(file, body);
    return file;
  };
  const config = (server: string, namespace?: string, extra = '') =>
    [
      'apiVersion: v1',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${server}${extra}`,
      'users:',
      '- name: u',
      '  user:',
      '    token: secret-token-123',
      'contexts:',
      '- name: x',
      '  context:',
      '    cluster: c',
      '    user: u',
      ...(namespace ? [`    namespace: ${namespace}`] : []),
      'current-context: x',
    ].join('\n');

  it('reads the KUBECONFIG file, with the context’s namespace unless KUBERNETES_NAMESPACE names one', () => {
    const file = kubeconfig(tmp(), config('https://k8s.example:6443', 'team-a'));
    const target = kubernetesTarget(k8s, { kubeconfig: [file], inCluster: null, namespace: null });
    expect(target).toMatchObject({ namespace: 'team-a', server: 'https://k8s.example:6443' });
    expect(target.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBeFalsy();
    expect(kubernetesTarget(k8s, { kubeconfig: [file], inCluster: null, namespace: 'other' }).namespace).toBe(
      'other',
    );
    const plain = kubeconfig(tmp(), config('https://k8s.example:6443'));
    expect(kubernetesTarget(k8s, { kubeconfig: [plain], inCluster: null, namespace: null }).namespace).toBe(
      'default',
    );
  });

  it('merges several KUBECONFIG files as kubectl does: the first to name something wins', () => {
    const dir = tmp();
    const first = path.join(dir, 'first');
    fs.writeFileSync(first, config('https://first.example', 'ns-first'));
    const second = path.join(dir, 'second');
    fs.writeFileSync(
      second,
      config('https://second.example', 'ns-second')
        .replace('- name: x', '- name: y')
        .replace('current-context: x', 'current-context: y'),
    );
    const target = kubernetesTarget(k8s, { kubeconfig: [first, second], inCluster: null, namespace: null });
    expect(target).toMatchObject({ server: 'https://first.example', namespace: 'ns-first' });
    expect(target.kubeConfig.getContexts().map((c) => c.name)).toEqual(['x', 'y']);
    const unset = path.join(dir, 'unset');
    fs.writeFileSync(unset, config('https://unset.example').replace('current-context: x', ''));
    expect(
      kubernetesTarget(k8s, { kubeconfig: [unset, second], inCluster: null, namespace: null }),
    ).toMatchObject({ server: 'https://unset.example', namespace: 'ns-second' });
  });

  it('lets a plain http:// server through (client 1.x refuses one without insecure-skip-tls-verify)', async () => {
    const file = kubeconfig(tmp(), config('http://127.0.0.1:8001'));
    const request = () => new k8s.RequestContext('http://127.0.0.1:8001/api/v1/pods', k8s.HttpMethod.GET);
    const raw = new k8s.KubeConfig();
    raw.loadFromFile(file);
    await expect(raw.applySecurityAuthentication(request())).rejects.toThrow(/HTTP protocol is not allowed/);
    const target = kubernetesTarget(k8s, { kubeconfig: [file], inCluster: null, namespace: null });
    expect(target.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(true);
    await expect(target.kubeConfig.applySecurityAuthentication(request())).resolves.toBeUndefined();
  });

  it('uses the service account in a pod: its token file, CA and namespace', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'token'), 'sa-token');
    fs.writeFileSync(path.join(dir, 'ca.crt'), 'ca');
    fs.writeFileSync(path.join(dir, 'namespace'), 'analytics\n');
    const target = kubernetesTarget(
      k8s,
      { kubeconfig: null, inCluster: { host: '10.0.0.1', port: 443 }, namespace: null },
      dir,
    );
    expect(target).toMatchObject({ namespace: 'analytics', server: 'https://10.0.0.1:443' });
    expect(target.kubeConfig.getCurrentCluster()).toMatchObject({ caFile: path.join(dir, 'ca.crt') });
    expect(target.kubeConfig.getCurrentUser()?.authProvider).toEqual({
      name: 'tokenFile',
      config: { tokenFile: path.join(dir, 'token') },
    });
    const v6 = kubernetesTarget(
      k8s,
      { kubeconfig: null, inCluster: { host: 'fd00::1', port: 443 }, namespace: 'mine' },
      dir,
    );
    expect(v6).toMatchObject({ namespace: 'mine', server: 'https://[fd00::1]:443' });
    expect(() =>
      kubernetesTarget(
        k8s,
        { kubeconfig: null, inCluster: { host: '10.0.0.1', port: 443 }, namespace: null },
        tmp(),
      ),
    ).toThrow(/service account token/);
  });

  it('refuses a kubeconfig that cannot work, without quoting it', () => {
    const dir = tmp();
    const broken = kubeconfig(dir, `${config('https://k8s.example')}\n  token: [secret-token-123\n`);
    const attempt = () => kubernetesTarget(k8s, { kubeconfig: [broken], inCluster: null, namespace: null });
    expect(attempt).toThrow(KubernetesConfigError);
    expect(attempt).toThrow(/KUBECONFIG: cannot read .*not a valid kubeconfig \(YAML/);
    let message = '';
    try {
      attempt();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toContain('secret-token-123');

    const noContext = kubeconfig(
      tmp(),
      config('https://k8s.example').replace('current-context: x', 'current-context: y'),
    );
    expect(() =>
      kubernetesTarget(k8s, { kubeconfig: [noContext], inCluster: null, namespace: null }),
    ).toThrow(/no current context/);
  });
});

describe('runtime settings', () => {
  const load = (env: Record<string, string | undefined>) =>
    new AppConfig('api', { NODE_ENV: 'test', ...env });

  it('defaults to no runtime with a 5 s bound', () => {
    expect(load({}).runtime).toEqual({ kind: 'none', timeoutMs: 5000, kubernetes: null });
    expect(load({ DEPLOYMENT_RUNTIME: 'none', KUBECONFIG: '/nowhere' }).runtime.kubernetes).toBeNull();
  });

  it('refuses an unknown runtime, and Kubernetes with no cluster to read, naming what to set', () => {
    expect(() => load({ DEPLOYMENT_RUNTIME: 'nomad' })).toThrow(
      /DEPLOYMENT_RUNTIME must be one of: none, kubernetes/,
    );
    expect(() => load({ DEPLOYMENT_RUNTIME: 'kubernetes' })).toThrow(ConfigError);
    expect(() => load({ DEPLOYMENT_RUNTIME: 'kubernetes' })).toThrow(/KUBECONFIG.*Kubernetes pod/s);
    expect(() => load({ DEPLOYMENT_RUNTIME: 'kubernetes', KUBECONFIG: '/nowhere/config' })).toThrow(
      /KUBECONFIG: \/nowhere\/config does not exist/,
    );
    expect(() => load({ DEPLOYMENT_RUNTIME_TIMEOUT_MS: '10' })).toThrow(/DEPLOYMENT_RUNTIME_TIMEOUT_MS/);
    expect(() => load({ KUBERNETES_NAMESPACE: 'Not_A_Namespace' })).toThrow(/KUBERNETES_NAMESPACE/);
  });

  it('takes KUBECONFIG (a list, as kubectl reads it) over the in-cluster configuration', () => {
    const dir = tmp();
    const [a, b] = ['a', 'b'].map((n) => {
      const f = path.join(dir, n);
      fs.writeFileSync(f, '');
      return f;
    });
    const inCluster = {
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_PLATFORM_URL: 'http://platform.test:3000/',
    };
    const runtime = load({
      DEPLOYMENT_RUNTIME: 'kubernetes',
      KUBECONFIG: `${a}${path.delimiter}${b}`,
      ...inCluster,
    }).runtime;
    expect(runtime).toMatchObject({
      kind: 'kubernetes',
      timeoutMs: 5000,
      kubernetes: { kubeconfig: [a, b], inCluster: { host: '10.0.0.1', port: 443 }, namespace: null },
    });
    expect(
      load({ DEPLOYMENT_RUNTIME: 'kubernetes', KUBERNETES_NAMESPACE: 'analytics', ...inCluster }).runtime
        .kubernetes,
    ).toMatchObject({ kubeconfig: null, inCluster: { host: '10.0.0.1', port: 443 }, namespace: 'analytics' });
  });

  it('runs deployments with documented defaults, and needs the address their pods reach it at', () => {
    const inCluster = {
      DEPLOYMENT_RUNTIME: 'kubernetes',
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    };
    expect(() => load(inCluster)).toThrow(/needs KUBERNETES_PLATFORM_URL/);
    expect(() => load({ ...inCluster, KUBERNETES_PLATFORM_URL: 'ftp://x' })).toThrow(
      /KUBERNETES_PLATFORM_URL must be/,
    );
    const base = { ...inCluster, KUBERNETES_PLATFORM_URL: 'http://platform.test:3000/' };
    expect(load(base).runtime.kubernetes!.reconcile).toEqual({
      platformUrl: 'http://platform.test:3000',
      cubeImage: 'cubejs/cube',
      gitImage: 'alpine/git:2.47.2',
      imagePullSecrets: [],
      egressAllowedCidrs: [],
      replicas: 2,
      stagingReplicas: 1,
      resources: { cpuRequest: '500m', cpuLimit: '2', memoryRequest: '1Gi', memoryLimit: '2Gi' },
      progressDeadlineSeconds: 600,
      networkPolicy: true,
      resyncCron: '*/5 * * * *',
      gitCredentialTtlSeconds: 3600,
    });
    expect(() => load({ ...base, KUBERNETES_CUBE_IMAGE: 'cubejs/cube:v1.6.2' })).toThrow(
      /KUBERNETES_CUBE_IMAGE/,
    );
    expect(() => load({ ...base, KUBERNETES_GIT_IMAGE: 'alpine/git' })).toThrow(/KUBERNETES_GIT_IMAGE/);
    expect(() => load({ ...base, KUBERNETES_CPU_LIMIT: 'two' })).toThrow(/KUBERNETES_CPU_LIMIT/);
    expect(() => load({ ...base, KUBERNETES_RESYNC_CRON: 'often' })).toThrow(/KUBERNETES_RESYNC_CRON/);
    expect(() => load({ ...base, KUBERNETES_EGRESS_ALLOWED_CIDRS: '10.0.0.0/33' })).toThrow(
      /KUBERNETES_EGRESS_ALLOWED_CIDRS/,
    );
    expect(
      load({
        ...base,
        KUBERNETES_CUBE_IMAGE: 'registry.example.com:5000/mirror/cube',
        KUBERNETES_IMAGE_PULL_SECRETS: 'regcred, other',
        KUBERNETES_EGRESS_ALLOWED_CIDRS: '10.20.0.0/16, fd00::/8',
      }).runtime.kubernetes!.reconcile,
    ).toMatchObject({
      cubeImage: 'registry.example.com:5000/mirror/cube',
      imagePullSecrets: ['regcred', 'other'],
      egressAllowedCidrs: ['10.20.0.0/16', 'fd00::/8'],
    });
  });
});
