import { inspect } from 'node:util';
import { getMetadataStorage } from 'class-validator';
import { AppConfig } from '../../src/core/config/app-config.js';
import { ENV_KEYS, EnvSchema } from '../../src/core/config/env.schema.js';

/**
 * Every variable the schema declares reaches the configuration: set alone (with the companions
 * it needs), each one changes what `AppConfig` holds, or what it refuses. The candidate values
 * come from the schema's own constraints (its allowed values, its bounds), so a variable added
 * to the schema is checked here without a line of this file changing, unless its format needs a
 * sample below.
 */
/** The Kubernetes runtime, in a pod, with the address its deployments reach this service at. */
const IN_CLUSTER = {
  DEPLOYMENT_RUNTIME: 'kubernetes',
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_PLATFORM_URL: 'http://platform.config-check.test:3000',
};

const SAMPLES: Partial<Record<keyof EnvSchema, string[]>> = {
  KUBERNETES_PLATFORM_URL: ['http://platform.config-check.test:3000/'],
  KUBERNETES_CUBE_IMAGE: ['registry.config-check.test:5000/mirror/cube'],
  KUBERNETES_GIT_IMAGE: ['registry.config-check.test/git:2.45.0'],
  KUBERNETES_IMAGE_PULL_SECRETS: ['regcred, other-cred'],
  KUBERNETES_CPU_REQUEST: ['250m'],
  KUBERNETES_CPU_LIMIT: ['3'],
  KUBERNETES_MEMORY_REQUEST: ['768Mi'],
  KUBERNETES_MEMORY_LIMIT: ['4Gi'],
  KUBERNETES_RESYNC_CRON: ['*/10 * * * *'],
  KUBERNETES_EGRESS_ALLOWED_CIDRS: ['10.20.0.0/16'],
  DATABASE_URL: ['postgres://u@db.test:5433/x'],
  REDIS_URL: ['redis://redis.test:6380'],
  QUEUE_PREFIX: ['config_check'],
  WORKER_QUEUES: ['default'],
  SECRETS_KEY: [Buffer.alloc(32, 7).toString('base64')],
  TRUST_PROXY: ['loopback'],
  BODY_LIMIT: ['3mb'],
  CORS_ORIGINS: ['https://app.config-check.test'],
  DEPLOYMENT_DOMAIN: ['config-check.test'],
  BOOTSTRAP_ACCOUNT: ['config-check'],
  BOOTSTRAP_EMAIL: ['admin@config-check.test'],
  DBT_GIT_PROTOCOLS: ['file'],
  DBT_GIT_HOSTS: ['git.config-check.test'],
  OUTBOUND_ALLOWED_HOSTS: ['10.9.0.0/16'],
  GITHUB_APP_PRIVATE_KEY: ['-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----'],
  GITHUB_APP_SLUG: ['config-check'],
  KUBERNETES_NAMESPACE: ['config-check'],
  KUBERNETES_SERVICE_HOST: ['10.96.0.1'],
  SMTP_URL: ['smtp://mail.config-check.test:2525'],
  SMTP_FROM: ['Reports <reports@config-check.test>'],
  DATA_API_URL_TEMPLATE: ['http://{deploymentId}.data.config-check.test/cubejs-api'],
  DASHBOARD_URL_TEMPLATE: ['https://app.config-check.test/d/{dashboardId}'],
};

/** What a variable needs beside it to take effect (the settings that only work together). */
const COMPANIONS: Partial<Record<keyof EnvSchema, Record<string, string>>> = {
  TLS_CERT_FILE: { TLS_KEY_FILE: '/tmp/config-check.key' },
  TLS_KEY_FILE: { TLS_CERT_FILE: '/tmp/config-check.crt' },
  USAGE_ANALYTICS_API_URL: { USAGE_ANALYTICS_DEPLOYMENT_ID: '7', USAGE_ANALYTICS_API_SECRET: 'x'.repeat(32) },
  USAGE_ANALYTICS_DEPLOYMENT_ID: {
    USAGE_ANALYTICS_API_URL: 'https://u.test',
    USAGE_ANALYTICS_API_SECRET: 'x'.repeat(32),
  },
  USAGE_ANALYTICS_API_SECRET: {
    USAGE_ANALYTICS_API_URL: 'https://u.test',
    USAGE_ANALYTICS_DEPLOYMENT_ID: '7',
  },
  KUBERNETES_SERVICE_HOST: { DEPLOYMENT_RUNTIME: 'kubernetes', KUBERNETES_SERVICE_PORT: '443' },
  KUBERNETES_SERVICE_PORT: { DEPLOYMENT_RUNTIME: 'kubernetes', KUBERNETES_SERVICE_HOST: '10.96.0.1' },
  KUBECONFIG: { DEPLOYMENT_RUNTIME: 'kubernetes' },
  KUBERNETES_NAMESPACE: IN_CLUSTER,
  KUBERNETES_PLATFORM_URL: {
    DEPLOYMENT_RUNTIME: 'kubernetes',
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
  },
  ...Object.fromEntries(
    [
      'KUBERNETES_CUBE_IMAGE',
      'KUBERNETES_GIT_IMAGE',
      'KUBERNETES_IMAGE_PULL_SECRETS',
      'KUBERNETES_REPLICAS',
      'KUBERNETES_STAGING_REPLICAS',
      'KUBERNETES_CPU_REQUEST',
      'KUBERNETES_CPU_LIMIT',
      'KUBERNETES_MEMORY_REQUEST',
      'KUBERNETES_MEMORY_LIMIT',
      'KUBERNETES_PROGRESS_DEADLINE_SECONDS',
      'KUBERNETES_NETWORK_POLICY',
      'KUBERNETES_EGRESS_ALLOWED_CIDRS',
      'KUBERNETES_RESYNC_CRON',
      'KUBERNETES_GIT_CREDENTIAL_TTL_SECONDS',
    ].map((key) => [key, IN_CLUSTER]),
  ),
  RUN_JOBS_IN_PROCESS: { REDIS_URL: 'redis://redis.test:6380' },
};

const BASE = { NODE_ENV: 'development' };

/** Candidate values from the schema's constraints on `key`. */
function candidates(key: keyof EnvSchema): string[] {
  const found: string[] = [...(SAMPLES[key] ?? [])];
  const rules = getMetadataStorage()
    .getTargetValidationMetadatas(EnvSchema, '', true, false)
    .filter((m) => m.propertyName === key);
  for (const rule of rules) {
    const [first] = (rule.constraints ?? []) as unknown[];
    switch (rule.name) {
      case 'isIn':
        found.push(...(first as string[]));
        break;
      case 'min':
      case 'max':
        found.push(String(first), String((first as number) + (rule.name === 'min' ? 1 : -1)));
        break;
      case 'isBoolean':
        found.push('true', 'false');
        break;
      case 'isUrl':
        found.push('https://config-check.test:8443/x');
        break;
      case 'isString':
        found.push('/tmp/config-check-value');
        break;
    }
  }
  return [...new Set(found)];
}

/** What the configuration holds for `env`, or what it refused. */
function outcome(env: Record<string, string>): string {
  try {
    return inspect(new AppConfig('api', env), { depth: 12, getters: false, sorted: true });
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

describe('configuration read from the schema', () => {
  it('reads exactly the variables the schema declares', () => {
    const read = new Set<string>();
    const env: Record<string, string | undefined> = { ...BASE };
    const source = new Proxy(env, {
      get(target, key) {
        if (typeof key === 'string') read.add(key);
        return target[key as string];
      },
    });
    new AppConfig('api', source);
    const declared = Object.keys(
      Object.fromEntries(
        getMetadataStorage()
          .getTargetValidationMetadatas(EnvSchema, '', true, false)
          .map((m) => [m.propertyName, true]),
      ),
    );
    expect([...ENV_KEYS].sort()).toEqual(declared.sort());
    expect([...read].filter((k) => /^[A-Z0-9_]+$/.test(k)).sort()).toEqual(declared.sort());
  });

  it('lets every variable, set alone, change the configuration', () => {
    const inert: string[] = [];
    for (const key of ENV_KEYS) {
      const context = { ...BASE, ...COMPANIONS[key] };
      const without = outcome(context);
      const arrived = candidates(key).some((value) => outcome({ ...context, [key]: value }) !== without);
      if (!arrived) inert.push(key);
    }
    expect(inert).toEqual([]);
  });

  it('JOB_SCHEDULE_GRACE_SECONDS arrives (it was once declared and never read)', () => {
    expect(
      new AppConfig('api', { ...BASE, JOB_SCHEDULE_GRACE_SECONDS: '60' }).queue.scheduleGraceSeconds,
    ).toBe(60);
  });
});
