import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { plainToInstance } from 'class-transformer';
import ipaddr from 'ipaddr.js';
import { validateSync } from 'class-validator';
import { parseOutboundAllowList, type OutboundAllowList } from '../net/outbound-address.js';
import { nextOccurrence } from '../queue/cron.js';
import { QUEUE_NAMES, isQueueName, type QueueName } from './queue-names.js';
import { ENV_KEYS, EnvSchema } from './env.schema.js';

export type ProcessRole = 'api' | 'worker' | 'cli';

export interface DatabaseConfig {
  /** Null means the embedded PGlite default in `dataDir`. */
  url: string | null;
  poolSize: number;
  dataDir: string;
  runMigrations: boolean;
  /** Server-side bound of one statement (`statement_timeout`), ms; 0 = none. PostgreSQL only. */
  statementTimeoutMs: number;
  /** Server-side bound of a wait for a lock (`lock_timeout`), ms; 0 = none. PostgreSQL only. */
  lockTimeoutMs: number;
  /** Longest wait for a new connection, or for a free one of the pool, ms. */
  connectTimeoutMs: number;
}

export interface QueueConfig {
  /** Null means no Redis: jobs run in-process. */
  redisUrl: string | null;
  prefix: string;
  /**
   * With Redis: whether this process runs jobs of the queues in {@link workerQueues} (always for
   * the worker; for the API only when RUN_JOBS_IN_PROCESS=true). Without Redis the API runs every
   * job in-process whatever this says.
   */
  runJobsInProcess: boolean;
  /** The queues this process runs jobs of, when it runs Bull jobs (WORKER_QUEUES; default all). */
  workerQueues: QueueName[];
  enqueueTimeoutMs: number;
  relayIntervalMs: number;
  /**
   * Seconds a started job (and the run it claimed) may go without a heartbeat before it is
   * recovered (JOB_LEASE_SECONDS; default 45: renewed every third of it, so a killed worker's run
   * is taken over within about a minute). Also how recently a worker must have said it consumes a
   * queue to count as its live consumer.
   */
  jobLeaseSeconds: number;
  /**
   * Seconds a job may wait, with no live worker consuming its queue, before readiness fails and
   * the logs name the queue (QUEUE_STALL_SECONDS; default 120).
   */
  stallSeconds: number;
  /**
   * How late a schedule's firing may still run: after downtime only the latest missed occurrence
   * fires, and only when it is at most this many seconds old (JOB_SCHEDULE_GRACE_SECONDS).
   */
  scheduleGraceSeconds: number;
  /**
   * Jobs of one account and one name a process runs at once (JOB_ACCOUNT_CONCURRENCY), never more
   * than the job's `concurrency`; null (the default): half the job's concurrency, rounded up.
   */
  accountConcurrency: number | null;
  /** How long a job whose account holds its share waits before it is handed over again, ms (JOB_DEFER_MS). */
  deferMs: number;
}

export interface HttpConfig {
  port: number;
  host: string;
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  trustProxy: string | number | boolean;
  allowHttp: boolean;
  bodyLimit: string;
  rateLimitMax: number;
  rateLimitWindowSeconds: number;
  /** Failed authentications (401 answers) per client address and window; 0 turns the check off. */
  authFailureLimitMax: number;
  /** Origins allowed to call the API from a browser: exact origins, or `['*']`; empty: none. */
  corsOrigins: string[];
  shutdownTimeoutMs: number;
  /**
   * How long an idle kept-alive connection stays open, ms (HTTP_KEEP_ALIVE_TIMEOUT_MS): above
   * the idle timeouts of the load balancers in front (60 s is common), so the server never closes
   * a socket a balancer is about to reuse. The headers timeout is 5 s above it.
   */
  keepAliveTimeoutMs: number;
}

/** The usage-analytics deployment that tokens from `POST /api/v1/usage-analytics/token` are for. */
export interface UsageAnalyticsConfig {
  /** Base URL of the deployment's data API. */
  apiUrl: string;
  deploymentId: number;
  /** The deployment's API secret, which signs the tokens. Never logged or returned. */
  apiSecret: string;
}

/** Where deployments' data models live and how they are compiled. */
export interface DataModelConfig {
  /** The directory holding one bare git repository per deployment (REPOS_DIR). */
  reposDir: string;
  /** Longest a compile of a model may run before its sandboxed process is killed, ms. */
  compileTimeoutMs: number;
  /** Memory cap of a compile's sandboxed process (its data limit, and its V8 heap cap), MB. */
  compileMemoryMb: number;
  /**
   * Warm sandboxed compile processes kept ready, per API process and per worker that runs builds
   * (MODEL_COMPILE_POOL_SIZE; default 1). 0: none is kept, and each compile starts its own.
   */
  compilePoolSize: number;
  /** How long a compile's verdict is reused for the same model tree, s; 0: never. */
  compileCacheSeconds: number;
  /** Compiles running at once in a process (MODEL_COMPILE_CONCURRENCY; default: the CPUs, at least 2). */
  compileConcurrency: number;
  /** Compiles of one account at once in a process (MODEL_COMPILE_ACCOUNT_CONCURRENCY; default: half of them). */
  compileAccountConcurrency: number;
  /** How long a validate waits for a compile slot before its 429, ms (MODEL_COMPILE_QUEUE_MS; default 10 s). */
  compileQueueMs: number;
  /** Largest model file accepted, bytes. */
  maxFileBytes: number;
  /** Most files one branch may hold. */
  maxFiles: number;
  /**
   * Bytes one account's uploads may hold in repositories before `finish` commits them or the
   * upload sweep prunes them (MODEL_UPLOAD_MAX_PENDING_BYTES; default 256 MiB).
   */
  uploadMaxPendingBytes: number;
  /** Git over HTTP: clones and fetches of a deployment's repository (`.../git`). */
  gitHttp: GitHttpConfig;
}

/** How clones and fetches over HTTP are bounded (src/modules/data-model/git-http). */
export interface GitHttpConfig {
  /** Git requests served at once in an API process (GIT_HTTP_CONCURRENCY; default: the CPUs, at least 4). */
  concurrency: number;
  /** Git requests of one account at once in an API process (GIT_HTTP_ACCOUNT_CONCURRENCY; default 2). */
  accountConcurrency: number;
  /** How long a git request waits for its slot before its 429 or 503, ms (GIT_HTTP_QUEUE_MS; default 10 s). */
  queueMs: number;
  /** Longest one git request may take, body and pack, before its git process is killed, ms (GIT_HTTP_TIMEOUT_MS; default 2 min). */
  timeoutMs: number;
  /** Largest body of a fetch request, before and after decompression, bytes (GIT_HTTP_MAX_REQUEST_BYTES; default 10 MiB). */
  maxRequestBytes: number;
}

/** How dbt syncs read a dbt project (src/modules/dbt-sync). */
export interface DbtSyncConfig {
  /**
   * The git transports a dbt repository URL may use (DBT_GIT_PROTOCOLS; default `https`): checked
   * when the URL is saved, and enforced on every fetch with git's own `GIT_ALLOW_PROTOCOL`.
   */
  gitProtocols: DbtGitProtocol[];
  /**
   * The hosts a dbt repository URL may name (DBT_GIT_HOSTS; `*.domain` for every host below it),
   * or null for any host. When set, git follows no HTTP redirect either.
   */
  gitHosts: string[] | null;
  /**
   * Largest manifest a sync reads, bytes (DBT_MANIFEST_MAX_BYTES): the JSON body of
   * `POST .../dbt-sync` (that route alone) and `target/manifest.json` read from git.
   */
  manifestMaxBytes: number;
  /**
   * Longest a sync's read of its dbt repository (ls-remote and the shallow fetch together) may
   * run before its git processes are killed, ms (DBT_GIT_TIMEOUT_MS; default 60 s).
   */
  gitTimeoutMs: number;
}

/** How scheduled notifications are mailed (src/modules/notifications/delivery). */
export interface MailConfig {
  /**
   * The SMTP server (SMTP_URL: `smtp://user:pass@host:587`, `smtps://` for TLS from the first
   * byte). A secret: it holds the password, so it is never logged or repeated in a message. Null:
   * mail is not configured, and every delivery fails saying so.
   */
  smtpUrl: string | null;
  /** The sender of every notification (SMTP_FROM); set whenever {@link smtpUrl} is. */
  from: string | null;
  /** Bound of connecting, of the server's greeting and of each silence of the socket, ms. */
  timeoutMs: number;
}

/** How dashboards are rendered to PDF or PNG for notifications (headless Chromium). */
export interface RenderingConfig {
  /** The Chromium executable (CHROMIUM_PATH; Debian's package: `/usr/bin/chromium`). */
  chromiumPath: string;
  /** Longest one rendering may take, browser start included, ms. */
  timeoutMs: number;
}

export const DBT_GIT_PROTOCOLS = ['https', 'http', 'ssh', 'git', 'file'] as const;

/** Scheduled notifications (src/modules/notifications). */
export interface NotificationsConfig {
  /**
   * The link to a dashboard in the product that notification emails carry (DASHBOARD_URL_TEMPLATE),
   * with `{deploymentId}`, `{dashboardId}`, `{publicId}` and `{workbookId}` filled in. Null: no link.
   */
  dashboardUrlTemplate: string | null;
  /** Most recipients of one notification, console and embed users together (NOTIFICATION_MAX_RECIPIENTS). */
  maxRecipients: number;
  /** Most deliveries an account's runs record for sending in one hour (NOTIFICATION_MAX_DELIVERIES_PER_HOUR). */
  maxDeliveriesPerHour: number;
  /** Shortest time between two firings of a notification's schedule, minutes (NOTIFICATION_MIN_INTERVAL_MINUTES). */
  minIntervalMinutes: number;
}

/** Dashboard exports to PNG or PDF (src/modules/dashboard-exports). */
export interface DashboardExportsConfig {
  /** Most exports of one account pending or processing at once (DASHBOARD_EXPORT_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** How long an export and its file are kept after it was started, seconds (DASHBOARD_EXPORT_TTL_SECONDS). */
  ttlSeconds: number;
}

/** Signed outbound webhooks (src/modules/webhooks). */
export interface WebhooksConfig {
  /** Most endpoints of one account (WEBHOOK_MAX_ENDPOINTS). */
  maxEndpoints: number;
  /** How long one POST may take, answer included, ms (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** How long after its first attempt a failing delivery is retried, hours (WEBHOOK_RETRY_HOURS; 0: never). */
  retryHours: number;
  /** Deliveries failed for good in a row after which an endpoint is disabled (WEBHOOK_DISABLE_AFTER_FAILURES). */
  disableAfterFailures: number;
  /** Days events and their deliveries are kept (WEBHOOK_RETENTION_DAYS). */
  retentionDays: number;
}

/** How this service queries deployments' Core Data APIs (src/modules/data-api-client). */
export interface DataApiConfig {
  /**
   * The data API address of a deployment, `{deploymentId}` and `{accountId}` to fill in
   * (DATA_API_URL_TEMPLATE); the client appends `/cubejs-api/v1/...`. Null: the deployment's own
   * `deploymentUrl`.
   */
  urlTemplate: string | null;
  /**
   * Whether deployments' own addresses (`deploymentUrl`, `https://deployment-<id>.<domain>`) are
   * where their data APIs answer: DEPLOYMENT_DOMAIN is set. Without it and without
   * {@link urlTemplate}, no data API is configured on this installation (the default domain,
   * `platform.localhost`, is a placeholder), and queries answer `data_api_not_configured`.
   */
  deploymentUrls: boolean;
  /** Longest one request to a data API may take, answer included, ms. */
  timeoutMs: number;
  /** How long a query answered `Continue wait` keeps being repeated before giving up, ms. */
  waitMs: number;
  /** Largest answer read from a data API, bytes. */
  maxBytes: number;
}
export type DbtGitProtocol = (typeof DBT_GIT_PROTOCOLS)[number];

/** How reports' Python runs (src/modules/python-runs): the sandbox pool and the result cache. */
export interface PythonRunsConfig {
  /**
   * Warm sandboxed processes the API keeps ready (PYTHON_POOL_SIZE; default 2 in production, 0
   * elsewhere). 0: none is kept, and each run starts its own (paying Pyodide's start).
   */
  poolSize: number;
  /** A run's kill timer, from when the code is handed over, ms. */
  timeoutMs: number;
  /** A run's memory cap (the process's data limit), MB. */
  memoryMb: number;
  /** How long a successful result is reused for the same report, code, SQL and user, s; 0: never. */
  cacheSeconds: number;
  /** Runs of one account under way at once in an API process (PYTHON_ACCOUNT_CONCURRENCY; default 2). */
  accountConcurrency: number;
}

/** The sandbox of untrusted code (src/core/sandbox), shared by model compiles and Python runs. */
export interface SandboxConfig {
  /** The bubblewrap program: a path, or a name looked for in the system's directories. */
  bwrapPath: string;
  /** The sandboxed children's niceness (0-19). */
  niceness: number;
}

/** The GitHub App this service acts as, and the API it talks to. */
export interface GitHubConfig {
  /** Base URL of GitHub's REST API (GITHUB_API_URL; GitHub Enterprise or a test server). */
  apiUrl: string;
  /** Null when no GitHub App is configured: discovery then answers `github_not_configured`. */
  app: { id: number; privateKey: string; slug: string } | null;
  /**
   * Whether an account may use only the installations it linked (the Setup URL's signed state):
   * the default, for a service whose accounts are different organizations. False
   * (`GITHUB_INSTALLATION_LINKING=off`): every installation of the App serves every account.
   */
  linkingRequired: boolean;
}

/**
 * Where deployments run: what `GET /deployments/{id}/pods` and `.../logs` read
 * (src/modules/deployment-runtime).
 */
export interface RuntimeConfig {
  /** `none`: no runtime; pods are an empty list, logs the platform's own job-run records. */
  kind: 'none' | 'kubernetes';
  /** Longest one request waits on the runtime before answering 503 `runtime_unavailable`, ms. */
  timeoutMs: number;
  /** Set when `kind` is `kubernetes`. */
  kubernetes: KubernetesConfig | null;
}

/** How to reach the Kubernetes API. `KUBECONFIG` wins over the in-cluster configuration. */
export interface KubernetesConfig {
  /** The kubeconfig files of `KUBECONFIG` (`:`-separated, merged as kubectl does); null: in-cluster. */
  kubeconfig: string[] | null;
  /** The API server Kubernetes announces to every pod (`KUBERNETES_SERVICE_HOST`, `_PORT`), if any. */
  inCluster: { host: string; port: number } | null;
  /**
   * `KUBERNETES_NAMESPACE`; null: the kubeconfig context's namespace (or the service account's
   * namespace in a cluster), else `default`.
   */
  namespace: string | null;
  /** What the service runs on the cluster for each deployment's environments. */
  reconcile: KubernetesReconcileConfig;
}

/** How deployments are run on the cluster (`KUBERNETES_*`; docs/deployments.md). */
export interface KubernetesReconcileConfig {
  /** This service's address as the pods reach it (`KUBERNETES_PLATFORM_URL`), no trailing slash. */
  platformUrl: string;
  /** The data API's image, without its tag (the tag is the deployment's version). */
  cubeImage: string;
  /** The image of the init container that fetches the model (git and tar). */
  gitImage: string;
  imagePullSecrets: string[];
  /** Private ranges the pods may reach too (a database in the cluster or a peered network). */
  egressAllowedCidrs: string[];
  replicas: number;
  stagingReplicas: number;
  resources: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string };
  progressDeadlineSeconds: number;
  networkPolicy: boolean;
  /** When the periodic resync runs (a cron, UTC). */
  resyncCron: string;
  /** How long a pod's git read credential lives, seconds. */
  gitCredentialTtlSeconds: number;
}

export class ConfigError extends Error {}

/**
 * Typed, validated configuration. The only place that reads `process.env`.
 */
export class AppConfig {
  readonly env: 'development' | 'test' | 'production';
  readonly database: DatabaseConfig;
  readonly queue: QueueConfig;
  readonly http: HttpConfig;
  readonly logLevel: string;
  readonly deploymentDomain: string;
  /** How often report views (lastViewedAt) buffered in memory are written, in ms. */
  readonly reportViewFlushMs: number;
  readonly bootstrap: { account: string; email: string };
  /**
   * How long a token's resolved principal is reused, in ms (0: resolved on every request).
   * Changes to keys, users, roles, groups and grants drop it sooner (see PrincipalCache).
   */
  readonly principalCacheTtlMs: number;
  /** Most embed users one account may hold; provisioning beyond it answers 429. */
  readonly embedUsersMax: number;
  /** Comment writes (post, edit, delete, resolve) one embed user may make per minute; past it 429. */
  readonly embedCommentWritesPerMinute: number;
  /** Most data API tokens that have not expired one environment may hold; issuing beyond it answers 429. */
  readonly environmentTokensMax: number;
  /**
   * The 32-byte key that encrypts secrets at rest. Outside production a fixed development key
   * stands in when none is configured ({@link secretsKeyIsDevelopmentDefault}).
   */
  readonly secretsKey: Buffer;
  readonly secretsKeyIsDevelopmentDefault: boolean;
  /** Null when usage analytics is not configured (the token endpoint then answers 404). */
  readonly usageAnalytics: UsageAnalyticsConfig | null;
  readonly dataModel: DataModelConfig;
  readonly github: GitHubConfig;
  readonly runtime: RuntimeConfig;
  readonly dbtSync: DbtSyncConfig;
  /**
   * What the operator opens to outbound calls whose address a tenant chose (OUTBOUND_ALLOWED_HOSTS;
   * default nothing): see core/net/outbound-address.ts.
   */
  readonly outboundAllowList: OutboundAllowList;
  readonly mail: MailConfig;
  readonly rendering: RenderingConfig;
  readonly dataApi: DataApiConfig;
  readonly notifications: NotificationsConfig;
  readonly dashboardExports: DashboardExportsConfig;
  readonly webhooks: WebhooksConfig;
  readonly pythonRuns: PythonRunsConfig;
  readonly sandbox: SandboxConfig;

  constructor(
    readonly role: ProcessRole,
    source: Record<string, string | undefined> = process.env,
  ) {
    const raw = Object.fromEntries(ENV_KEYS.map((k) => [k, source[k] === '' ? undefined : source[k]]));
    const env = plainToInstance(EnvSchema, raw);
    const errors = validateSync(env, { forbidUnknownValues: false });
    if (errors.length > 0) {
      const lines = errors.map((e) => `  ${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
      throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
    }
    if (Boolean(env.TLS_CERT_FILE) !== Boolean(env.TLS_KEY_FILE)) {
      throw new ConfigError('Invalid configuration:\n  TLS_CERT_FILE and TLS_KEY_FILE must be set together');
    }
    const usage = [
      env.USAGE_ANALYTICS_API_URL,
      env.USAGE_ANALYTICS_DEPLOYMENT_ID,
      env.USAGE_ANALYTICS_API_SECRET,
    ];
    if (usage.some((v) => v !== undefined) && !usage.every((v) => v !== undefined)) {
      throw new ConfigError(
        'Invalid configuration:\n  USAGE_ANALYTICS_API_URL, USAGE_ANALYTICS_DEPLOYMENT_ID and ' +
          'USAGE_ANALYTICS_API_SECRET must be set together',
      );
    }

    this.env = (env.NODE_ENV as AppConfig['env'] | undefined) ?? 'production';
    const development = this.env !== 'production';
    this.database = {
      url: env.DATABASE_URL ?? null,
      poolSize: env.DATABASE_POOL_SIZE ?? 10,
      dataDir: path.resolve(env.DATA_DIR ?? '.data'),
      runMigrations: env.MIGRATIONS_RUN ?? true,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS ?? 15_000,
      lockTimeoutMs: env.DATABASE_LOCK_TIMEOUT_MS ?? 5_000,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS ?? 5_000,
    };
    this.queue = {
      redisUrl: env.REDIS_URL ?? null,
      prefix: env.QUEUE_PREFIX ?? 'platform',
      // With Redis the API leaves jobs to workers unless told otherwise; without Redis it is the
      // only process that can run them, so it does.
      runJobsInProcess:
        role === 'worker' || (role === 'api' && (env.REDIS_URL ? (env.RUN_JOBS_IN_PROCESS ?? false) : true)),
      workerQueues: parseWorkerQueues(env.WORKER_QUEUES),
      enqueueTimeoutMs: env.QUEUE_ENQUEUE_TIMEOUT_MS ?? 2000,
      relayIntervalMs: env.OUTBOX_RELAY_INTERVAL_MS ?? 5000,
      jobLeaseSeconds: env.JOB_LEASE_SECONDS ?? 45,
      stallSeconds: env.QUEUE_STALL_SECONDS ?? 120,
      scheduleGraceSeconds: env.JOB_SCHEDULE_GRACE_SECONDS ?? 3600,
      accountConcurrency: env.JOB_ACCOUNT_CONCURRENCY ?? null,
      deferMs: env.JOB_DEFER_MS ?? 2000,
    };
    this.http = {
      port: env.PORT ?? 3000,
      host: env.HOST ?? '0.0.0.0',
      tlsCertFile: env.TLS_CERT_FILE ?? null,
      tlsKeyFile: env.TLS_KEY_FILE ?? null,
      trustProxy: parseTrustProxy(env.TRUST_PROXY),
      allowHttp: env.ALLOW_HTTP ?? development,
      bodyLimit: env.BODY_LIMIT ?? '1mb',
      rateLimitMax: env.RATE_LIMIT_MAX ?? 1200,
      rateLimitWindowSeconds: env.RATE_LIMIT_WINDOW_SECONDS ?? 60,
      authFailureLimitMax: env.AUTH_FAILURE_LIMIT_MAX ?? 30,
      corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS ?? 10000,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65_000,
    };
    this.logLevel = env.LOG_LEVEL ?? (role === 'cli' ? 'silent' : this.env === 'test' ? 'warn' : 'info');
    this.deploymentDomain = env.DEPLOYMENT_DOMAIN ?? 'platform.localhost';
    this.reportViewFlushMs = env.REPORT_VIEW_FLUSH_MS ?? 1000;
    this.embedUsersMax = env.EMBED_USERS_MAX ?? 100_000;
    this.embedCommentWritesPerMinute = env.EMBED_COMMENT_WRITES_PER_MINUTE ?? 20;
    this.environmentTokensMax = env.ENVIRONMENT_TOKENS_MAX ?? 1_000;
    this.principalCacheTtlMs = env.PRINCIPAL_CACHE_TTL_MS ?? 5_000;
    if (env.SECRETS_KEY) {
      this.secretsKey = Buffer.from(env.SECRETS_KEY, 'base64');
      this.secretsKeyIsDevelopmentDefault = false;
    } else if (development || role === 'cli') {
      this.secretsKey = createHash('sha256').update('platform-api development secrets key').digest();
      this.secretsKeyIsDevelopmentDefault = true;
    } else {
      throw new ConfigError(
        'Invalid configuration:\n  SECRETS_KEY is required in production (openssl rand -base64 32)',
      );
    }
    this.bootstrap = {
      account: env.BOOTSTRAP_ACCOUNT ?? 'default',
      email: env.BOOTSTRAP_EMAIL ?? 'admin@example.com',
    };
    this.usageAnalytics =
      env.USAGE_ANALYTICS_API_URL && env.USAGE_ANALYTICS_DEPLOYMENT_ID && env.USAGE_ANALYTICS_API_SECRET
        ? {
            apiUrl: env.USAGE_ANALYTICS_API_URL,
            deploymentId: env.USAGE_ANALYTICS_DEPLOYMENT_ID,
            apiSecret: env.USAGE_ANALYTICS_API_SECRET,
          }
        : null;
    // A compile takes a core: as many at once as the machine has, half of them for one account.
    const compileConcurrency = env.MODEL_COMPILE_CONCURRENCY ?? Math.max(2, os.availableParallelism());
    // A fetch packs with one thread: one core each, and room for small clones beside a large one.
    const gitHttpConcurrency = env.GIT_HTTP_CONCURRENCY ?? Math.max(4, os.availableParallelism());
    this.dataModel = {
      reposDir: path.resolve(env.REPOS_DIR ?? path.join(this.database.dataDir, 'repos')),
      compileTimeoutMs: env.MODEL_COMPILE_TIMEOUT_MS ?? 30_000,
      compileMemoryMb: env.MODEL_COMPILE_MEMORY_MB ?? 512,
      compilePoolSize: env.MODEL_COMPILE_POOL_SIZE ?? 1,
      compileCacheSeconds: env.MODEL_COMPILE_CACHE_SECONDS ?? 86_400,
      compileConcurrency,
      compileAccountConcurrency:
        env.MODEL_COMPILE_ACCOUNT_CONCURRENCY ?? Math.max(1, Math.floor(compileConcurrency / 2)),
      compileQueueMs: env.MODEL_COMPILE_QUEUE_MS ?? 10_000,
      maxFileBytes: env.MODEL_MAX_FILE_BYTES ?? 1024 * 1024,
      maxFiles: env.MODEL_MAX_FILES ?? 5_000,
      uploadMaxPendingBytes: env.MODEL_UPLOAD_MAX_PENDING_BYTES ?? 256 * 1024 * 1024,
      gitHttp: {
        concurrency: gitHttpConcurrency,
        accountConcurrency: Math.min(env.GIT_HTTP_ACCOUNT_CONCURRENCY ?? 2, gitHttpConcurrency),
        queueMs: env.GIT_HTTP_QUEUE_MS ?? 10_000,
        timeoutMs: env.GIT_HTTP_TIMEOUT_MS ?? 120_000,
        maxRequestBytes: env.GIT_HTTP_MAX_REQUEST_BYTES ?? 10 * 1024 * 1024,
      },
    };
    const app = [env.GITHUB_APP_ID, env.GITHUB_APP_PRIVATE_KEY, env.GITHUB_APP_SLUG];
    if (app.some((v) => v !== undefined) && !app.every((v) => v !== undefined)) {
      throw new ConfigError(
        'Invalid configuration:\n  GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_SLUG must be set together',
      );
    }
    this.github = {
      apiUrl: (env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, ''),
      app:
        env.GITHUB_APP_ID && env.GITHUB_APP_PRIVATE_KEY && env.GITHUB_APP_SLUG
          ? {
              id: env.GITHUB_APP_ID,
              // PEM text passed through env files often has its line breaks escaped.
              privateKey: env.GITHUB_APP_PRIVATE_KEY.replace(/\\n/g, '\n'),
              slug: env.GITHUB_APP_SLUG,
            }
          : null,
      linkingRequired: (env.GITHUB_INSTALLATION_LINKING ?? 'required') === 'required',
    };
    this.runtime = runtimeConfig(env);
    this.dbtSync = {
      gitProtocols: parseGitProtocols(env.DBT_GIT_PROTOCOLS),
      gitHosts: parseGitHosts(env.DBT_GIT_HOSTS),
      manifestMaxBytes: env.DBT_MANIFEST_MAX_BYTES ?? 50 * 1024 * 1024,
      gitTimeoutMs: env.DBT_GIT_TIMEOUT_MS ?? 60_000,
    };
    this.outboundAllowList = outboundAllowListOf(env.OUTBOUND_ALLOWED_HOSTS);
    this.dataApi = {
      urlTemplate: parseDataApiUrlTemplate(env.DATA_API_URL_TEMPLATE),
      deploymentUrls: env.DEPLOYMENT_DOMAIN !== undefined,
      timeoutMs: env.DATA_API_TIMEOUT_MS ?? 30_000,
      waitMs: env.DATA_API_WAIT_MS ?? 60_000,
      maxBytes: env.DATA_API_MAX_BYTES ?? 32 * 1024 * 1024,
    };
    this.notifications = {
      dashboardUrlTemplate: env.DASHBOARD_URL_TEMPLATE?.trim() || null,
      maxRecipients: env.NOTIFICATION_MAX_RECIPIENTS ?? 500,
      maxDeliveriesPerHour: env.NOTIFICATION_MAX_DELIVERIES_PER_HOUR ?? 5000,
      minIntervalMinutes: env.NOTIFICATION_MIN_INTERVAL_MINUTES ?? 15,
    };
    this.dashboardExports = {
      maxInFlight: env.DASHBOARD_EXPORT_MAX_IN_FLIGHT ?? 3,
      ttlSeconds: env.DASHBOARD_EXPORT_TTL_SECONDS ?? 300,
    };
    this.webhooks = {
      maxEndpoints: env.WEBHOOK_MAX_ENDPOINTS ?? 20,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS ?? 10_000,
      retryHours: env.WEBHOOK_RETRY_HOURS ?? 24,
      disableAfterFailures: env.WEBHOOK_DISABLE_AFTER_FAILURES ?? 10,
      retentionDays: env.WEBHOOK_RETENTION_DAYS ?? 30,
    };
    this.pythonRuns = {
      poolSize: env.PYTHON_POOL_SIZE ?? (this.env === 'production' ? 2 : 0),
      timeoutMs: env.PYTHON_RUN_TIMEOUT_MS ?? 10_000,
      memoryMb: env.PYTHON_RUN_MEMORY_MB ?? 1024,
      cacheSeconds: env.PYTHON_RUN_CACHE_SECONDS ?? 60,
      accountConcurrency: env.PYTHON_ACCOUNT_CONCURRENCY ?? 2,
    };
    this.sandbox = {
      bwrapPath: env.SANDBOX_BWRAP_PATH ?? env.PYTHON_BWRAP_PATH ?? 'bwrap',
      niceness: env.SANDBOX_NICENESS ?? 10,
    };
    this.mail = mailConfig(env);
    this.rendering = {
      chromiumPath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      timeoutMs: env.RENDER_TIMEOUT_MS ?? 30_000,
    };
    refuseUnreachableHttps(this);
  }

  get embedded(): boolean {
    return this.database.url === null;
  }
}

/**
 * `SMTP_URL` and `SMTP_FROM` go together. The URL is a secret: no message here repeats it, nor
 * any part of it.
 */
function mailConfig(env: EnvSchema): MailConfig {
  const timeoutMs = env.SMTP_TIMEOUT_MS ?? 30_000;
  if (env.SMTP_URL === undefined && env.SMTP_FROM === undefined) {
    return { smtpUrl: null, from: null, timeoutMs };
  }
  if (env.SMTP_URL === undefined || env.SMTP_FROM === undefined) {
    throw new ConfigError('Invalid configuration:\n  SMTP_URL and SMTP_FROM must be set together');
  }
  let host = '';
  try {
    host = new URL(env.SMTP_URL).hostname;
  } catch {
    host = '';
  }
  if (host === '') {
    throw new ConfigError(
      'Invalid configuration:\n  SMTP_URL must be an smtp:// or smtps:// URL with a host ' +
        '(smtp://user:password@host:587); user and password percent-encoded',
    );
  }
  return { smtpUrl: env.SMTP_URL, from: env.SMTP_FROM, timeoutMs };
}

/**
 * `DEPLOYMENT_RUNTIME=kubernetes` needs a cluster to talk to: the kubeconfig files of `KUBECONFIG`
 * (which must exist), else the in-cluster configuration of a pod. Neither is refused at start-up.
 */
function runtimeConfig(env: EnvSchema): RuntimeConfig {
  const kind = (env.DEPLOYMENT_RUNTIME ?? 'none') as RuntimeConfig['kind'];
  const timeoutMs = env.DEPLOYMENT_RUNTIME_TIMEOUT_MS ?? 5_000;
  if (kind !== 'kubernetes') return { kind, timeoutMs, kubernetes: null };
  const files = env.KUBECONFIG?.split(path.delimiter).filter((f) => f.trim() !== '') ?? [];
  const inCluster =
    env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT
      ? { host: env.KUBERNETES_SERVICE_HOST, port: env.KUBERNETES_SERVICE_PORT }
      : null;
  if (files.length === 0 && !inCluster) {
    throw new ConfigError(
      'Invalid configuration:\n  DEPLOYMENT_RUNTIME=kubernetes, but there is no cluster to read: set ' +
        'KUBECONFIG to a kubeconfig file, or run the service in a Kubernetes pod (in-cluster ' +
        'configuration; KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset here)',
    );
  }
  const missing = files.filter((f) => !fs.existsSync(f));
  if (missing.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  KUBECONFIG: ${missing.join(', ')} does not exist (DEPLOYMENT_RUNTIME=kubernetes)`,
    );
  }
  if (!env.KUBERNETES_PLATFORM_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  DEPLOYMENT_RUNTIME=kubernetes needs KUBERNETES_PLATFORM_URL: this service's " +
        "address as the deployments' pods reach it (http://analytics-platform-api.analytics.svc:3000), " +
        'from which they fetch their model',
    );
  }
  return {
    kind,
    timeoutMs,
    kubernetes: {
      kubeconfig: files.length > 0 ? files.map((f) => path.resolve(f)) : null,
      inCluster,
      namespace: env.KUBERNETES_NAMESPACE ?? null,
      reconcile: {
        platformUrl: env.KUBERNETES_PLATFORM_URL.replace(/\/+$/, ''),
        cubeImage: env.KUBERNETES_CUBE_IMAGE ?? 'cubejs/cube',
        gitImage: env.KUBERNETES_GIT_IMAGE ?? 'alpine/git:2.47.2',
        imagePullSecrets: (env.KUBERNETES_IMAGE_PULL_SECRETS ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
        egressAllowedCidrs: parseCidrs(env.KUBERNETES_EGRESS_ALLOWED_CIDRS),
        replicas: env.KUBERNETES_REPLICAS ?? 2,
        stagingReplicas: env.KUBERNETES_STAGING_REPLICAS ?? 1,
        resources: {
          cpuRequest: env.KUBERNETES_CPU_REQUEST ?? '500m',
          cpuLimit: env.KUBERNETES_CPU_LIMIT ?? '2',
          memoryRequest: env.KUBERNETES_MEMORY_REQUEST ?? '1Gi',
          memoryLimit: env.KUBERNETES_MEMORY_LIMIT ?? '2Gi',
        },
        progressDeadlineSeconds: env.KUBERNETES_PROGRESS_DEADLINE_SECONDS ?? 600,
        networkPolicy: env.KUBERNETES_NETWORK_POLICY ?? true,
        resyncCron: validCron('KUBERNETES_RESYNC_CRON', env.KUBERNETES_RESYNC_CRON ?? '*/5 * * * *'),
        gitCredentialTtlSeconds: env.KUBERNETES_GIT_CREDENTIAL_TTL_SECONDS ?? 3600,
      },
    },
  };
}

/** `KUBERNETES_EGRESS_ALLOWED_CIDRS`: IPv4 or IPv6 CIDRs separated by commas. */
function parseCidrs(text: string | undefined): string[] {
  const cidrs = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const cidr of cidrs) {
    try {
      ipaddr.parseCIDR(cidr);
    } catch {
      throw new ConfigError(
        `Invalid configuration:\n  KUBERNETES_EGRESS_ALLOWED_CIDRS: ${cidr} is not a CIDR (10.20.0.0/16, fd00::/8)`,
      );
    }
  }
  return cidrs;
}

/** A cron the schedules can read (five or six fields), else the start-up error naming `name`. */
function validCron(name: string, cron: string): string {
  try {
    nextOccurrence(cron, 'UTC', new Date());
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${name}: ${(err as Error).message}`);
  }
  return cron.trim();
}

/**
 * `DATA_API_URL_TEMPLATE`: an http(s) base address with no query or fragment, in which
 * `{deploymentId}` and `{accountId}` are the only placeholders (none is needed: one address for
 * every deployment). A trailing slash is dropped.
 */
function parseDataApiUrlTemplate(value: string | undefined): string | null {
  if (value === undefined) return null;
  const template = value.trim().replace(/\/+$/, '');
  const unknown = [...template.matchAll(/\{([^}]*)\}/g)]
    .map((m) => m[1])
    .filter((name) => name !== 'deploymentId' && name !== 'accountId');
  let url: URL | null = null;
  try {
    url = new URL(template.replaceAll('{deploymentId}', '1').replaceAll('{accountId}', '1'));
  } catch {
    url = null;
  }
  const plain = url && !url.username && !url.password && !url.search && !url.hash;
  if (unknown.length > 0 || !url || !plain || !['http:', 'https:'].includes(url.protocol)) {
    throw new ConfigError(
      'Invalid configuration:\n  DATA_API_URL_TEMPLATE must be an http:// or https:// address without ' +
        'credentials, query or fragment, with `{deploymentId}` and `{accountId}` as its only placeholders ' +
        '(e.g. https://{deploymentId}.data.example.com)',
    );
  }
  return template;
}

/** `WORKER_QUEUES`: queue names separated by commas; an unknown name is refused at start-up. */
function parseWorkerQueues(value: string | undefined): QueueName[] {
  if (value === undefined) return [...QUEUE_NAMES];
  const names = [
    ...new Set(
      value
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  ];
  const unknown = names.filter((n) => !isQueueName(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  WORKER_QUEUES: ${unknown.length > 0 ? `${unknown.join(', ')} is not a queue` : 'names no queue'}; ` +
        `the queues are ${QUEUE_NAMES.join(', ')}`,
    );
  }
  return names as QueueName[];
}

/** `DBT_GIT_PROTOCOLS`: git transports separated by commas; an unknown one is refused at start-up. */
function parseGitProtocols(value: string | undefined): DbtGitProtocol[] {
  if (value === undefined) return ['https'];
  const names = [
    ...new Set(
      value
        .split(',')
        .map((n) => n.trim().toLowerCase())
        .filter((n) => n !== ''),
    ),
  ];
  const unknown = names.filter((n) => !(DBT_GIT_PROTOCOLS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  DBT_GIT_PROTOCOLS: ${unknown.length > 0 ? `${unknown.join(', ')} is not a git transport` : 'names no transport'}; ` +
        `choose from ${DBT_GIT_PROTOCOLS.join(', ')}`,
    );
  }
  return names as DbtGitProtocol[];
}

/** `OUTBOUND_ALLOWED_HOSTS`, or a ConfigError naming the entries that are not hosts, addresses or ranges. */
function outboundAllowListOf(value: string | undefined): OutboundAllowList {
  try {
    return parseOutboundAllowList(value);
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  OUTBOUND_ALLOWED_HOSTS: ${(err as Error).message}`);
  }
}

/**
 * `DBT_GIT_HOSTS`: the hosts a dbt repository URL may name, separated by commas; `*.example.com`
 * stands for every host below example.com. Unset: any host.
 */
function parseGitHosts(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const patterns = [
    ...new Set(
      value
        .split(',')
        .map((p) => p.trim().toLowerCase().replace(/\.$/, ''))
        .filter((p) => p !== ''),
    ),
  ];
  const label = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
  const valid = new RegExp(`^(\\*\\.)?${label}(\\.${label})*$`);
  const bad = patterns.filter((p) => !valid.test(p) || p === '*');
  if (patterns.length === 0 || bad.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  DBT_GIT_HOSTS: ${bad.length > 0 ? `${bad.join(', ')} is not a host name or *.domain` : 'names no host'}; ` +
        'give host names separated by commas, such as github.com,*.gitlab.example.com',
    );
  }
  return patterns;
}

function parseTrustProxy(value: string | undefined): string | number | boolean {
  if (value === undefined) return false;
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}

/**
 * `CORS_ORIGINS`: exact origins as browsers send them (scheme, host and port only), or `*` alone.
 * A near miss such as a trailing slash would never match, so it is refused at start-up.
 */
function parseCorsOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = [
    ...new Set(
      value
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    ),
  ];
  if (origins.includes('*')) {
    if (origins.length > 1)
      throw new ConfigError('Invalid configuration:\n  CORS_ORIGINS: `*` must stand alone');
    return origins;
  }
  const bad = origins.filter((o) => {
    try {
      const url = new URL(o);
      return !['http:', 'https:'].includes(url.protocol) || url.origin !== o;
    } catch {
      return true;
    }
  });
  if (bad.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  CORS_ORIGINS: ${bad.join(', ')} is not an origin ` +
        '(scheme://host[:port], lower case, no path or trailing slash)',
    );
  }
  return origins;
}

/**
 * In production an API process with neither TLS nor a trusted proxy would answer every request
 * `403 https_required`: refuse to start instead, naming the settings that fix it.
 */
function refuseUnreachableHttps(config: AppConfig): void {
  const { http } = config;
  const proxied = http.trustProxy !== false && http.trustProxy !== 0;
  if (config.env !== 'production' || config.role !== 'api') return;
  if (http.allowHttp || http.tlsCertFile || proxied) return;
  throw new ConfigError(
    'Invalid configuration:\n  NODE_ENV=production serves HTTPS only, but neither TLS_CERT_FILE and ' +
      'TLS_KEY_FILE (TLS in the service) nor TRUST_PROXY (TLS at a proxy that sends ' +
      'X-Forwarded-Proto) is set, so every request would be refused with 403 https_required. ' +
      'Set one of them, or ALLOW_HTTP=true to serve plain HTTP (local use only).',
  );
}
