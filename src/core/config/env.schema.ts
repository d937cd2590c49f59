import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  getMetadataStorage,
} from 'class-validator';

/** An image name without tag or digest: an optional registry host (and port), then path components. */
const IMAGE_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?\/)?[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
/** An image name with a tag (`:2.47.2`) or a digest (`@sha256:...`). */
const IMAGE_REFERENCE = new RegExp(
  `${IMAGE_NAME.source.slice(0, -1)}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$`,
);
/** A Kubernetes resource quantity as requests and limits take it. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

const toBool = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  return value;
};
const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;

/**
 * Every environment variable the service reads. Validated once at boot; the process refuses
 * to start with a message naming each bad variable. `.env.example` documents the same list.
 */
export class EnvSchema {
  @IsOptional() @IsIn(['development', 'test', 'production']) NODE_ENV?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT?: number;
  @IsOptional() @IsString() HOST?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(200) DATABASE_POOL_SIZE?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(3600000) DATABASE_STATEMENT_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(3600000) DATABASE_LOCK_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(60000) DATABASE_CONNECT_TIMEOUT_MS?: number;
  @IsOptional() @IsString() @MinLength(1) DATA_DIR?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() MIGRATIONS_RUN?: boolean;

  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'QUEUE_PREFIX must be 1-64 of A-Z a-z 0-9 _ -' })
  QUEUE_PREFIX?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() RUN_JOBS_IN_PROCESS?: boolean;
  /** Comma-separated queue names (`builds,default`); checked against the queues in AppConfig. */
  @IsOptional() @IsString() WORKER_QUEUES?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(30000) QUEUE_ENQUEUE_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(600000) OUTBOX_RELAY_INTERVAL_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(5) @Max(86400) JOB_LEASE_SECONDS?: number;
  /** How long a job may wait with no live worker consuming its queue before readiness fails. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(86400) QUEUE_STALL_SECONDS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(604800) JOB_SCHEDULE_GRACE_SECONDS?: number;
  /** Jobs of one account and one name running at once per process; unset: half the job's concurrency. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000) JOB_ACCOUNT_CONCURRENCY?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(10) @Max(600000) JOB_DEFER_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(10) @Max(60000) REPORT_VIEW_FLUSH_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100000000) EMBED_USERS_MAX?: number;
  /** Writes (post, edit, delete, resolve) of comments on embedded dashboards per embed user per minute. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(10000) EMBED_COMMENT_WRITES_PER_MINUTE?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000000) ENVIRONMENT_TOKENS_MAX?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(60000) PRINCIPAL_CACHE_TTL_MS?: number;

  @IsOptional()
  @Matches(/^[A-Za-z0-9+/_-]{43}=?$/, {
    message: 'SECRETS_KEY must be 32 random bytes in base64 (openssl rand -base64 32)',
  })
  SECRETS_KEY?: string;

  @IsOptional() @IsString() TLS_CERT_FILE?: string;
  @IsOptional() @IsString() TLS_KEY_FILE?: string;
  @IsOptional() @IsString() TRUST_PROXY?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() ALLOW_HTTP?: boolean;

  @IsOptional()
  @Matches(/^\d+(b|kb|mb)$/i, { message: 'BODY_LIMIT must look like 512kb or 1mb' })
  BODY_LIMIT?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(1000000) RATE_LIMIT_MAX?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(86400) RATE_LIMIT_WINDOW_SECONDS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(1000000) AUTH_FAILURE_LIMIT_MAX?: number;
  /** Comma-separated exact origins (`https://app.example.com`), or `*` alone; parsed in AppConfig. */
  @IsOptional() @IsString() CORS_ORIGINS?: string;

  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(600000) SHUTDOWN_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(3600000) HTTP_KEEP_ALIVE_TIMEOUT_MS?: number;

  @IsOptional()
  @Matches(/^[a-z0-9.-]+$/, { message: 'DEPLOYMENT_DOMAIN must be a host name' })
  DEPLOYMENT_DOMAIN?: string;
  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9-]{1,62}$/, { message: 'BOOTSTRAP_ACCOUNT must be a slug' })
  BOOTSTRAP_ACCOUNT?: string;
  @IsOptional() @IsString() BOOTSTRAP_EMAIL?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'USAGE_ANALYTICS_API_URL must be an http:// or https:// URL' },
  )
  USAGE_ANALYTICS_API_URL?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'USAGE_ANALYTICS_DEPLOYMENT_ID must be a positive integer' })
  @Min(1, { message: 'USAGE_ANALYTICS_DEPLOYMENT_ID must be a positive integer' })
  @Max(2147483647)
  USAGE_ANALYTICS_DEPLOYMENT_ID?: number;
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'USAGE_ANALYTICS_API_SECRET must be at least 32 characters' })
  USAGE_ANALYTICS_API_SECRET?: string;

  @IsOptional() @IsString() @MinLength(1) REPOS_DIR?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(600000) MODEL_COMPILE_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(256) @Max(16384) MODEL_COMPILE_MEMORY_MB?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(32) MODEL_COMPILE_POOL_SIZE?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(2592000) MODEL_COMPILE_CACHE_SECONDS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(64) MODEL_COMPILE_CONCURRENCY?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(64) MODEL_COMPILE_ACCOUNT_CONCURRENCY?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(600000) MODEL_COMPILE_QUEUE_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) @Max(104857600) MODEL_MAX_FILE_BYTES?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100000) MODEL_MAX_FILES?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(1099511627776)
  MODEL_UPLOAD_MAX_PENDING_BYTES?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(256) GIT_HTTP_CONCURRENCY?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(256) GIT_HTTP_ACCOUNT_CONCURRENCY?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(600000) GIT_HTTP_QUEUE_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(3600000) GIT_HTTP_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) @Max(1073741824) GIT_HTTP_MAX_REQUEST_BYTES?: number;

  /** Comma-separated git transports a dbt repository URL may use (`https,file`); checked in AppConfig. */
  @IsOptional() @IsString() DBT_GIT_PROTOCOLS?: string;
  @IsOptional() @IsString() DBT_GIT_HOSTS?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) @Max(1073741824) DBT_MANIFEST_MAX_BYTES?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(3600000) DBT_GIT_TIMEOUT_MS?: number;
  /** Hosts, *.suffixes, addresses and CIDR ranges tenants may aim outbound calls at despite the rule of core/net; checked in AppConfig. */
  @IsOptional() @IsString() OUTBOUND_ALLOWED_HOSTS?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'GITHUB_API_URL must be an http:// or https:// URL' },
  )
  GITHUB_API_URL?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'GITHUB_APP_ID must be a positive integer' })
  @Min(1, { message: 'GITHUB_APP_ID must be a positive integer' })
  GITHUB_APP_ID?: number;
  @IsOptional()
  @Matches(/-----BEGIN [A-Z ]*PRIVATE KEY-----/, {
    message: 'GITHUB_APP_PRIVATE_KEY must be the PEM text of the GitHub App private key',
  })
  GITHUB_APP_PRIVATE_KEY?: string;
  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9-]{0,99}$/i, { message: 'GITHUB_APP_SLUG must be the GitHub App slug' })
  GITHUB_APP_SLUG?: string;
  @IsOptional() @IsIn(['required', 'off']) GITHUB_INSTALLATION_LINKING?: string;

  @IsOptional()
  @IsIn(['none', 'kubernetes'], { message: 'DEPLOYMENT_RUNTIME must be one of: none, kubernetes' })
  DEPLOYMENT_RUNTIME?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(60000) DEPLOYMENT_RUNTIME_TIMEOUT_MS?: number;
  /** A kubeconfig file, or several separated by `:` as kubectl reads them; checked in AppConfig. */
  @IsOptional() @IsString() KUBECONFIG?: string;
  @IsOptional()
  @Matches(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, {
    message: 'KUBERNETES_NAMESPACE must be a Kubernetes namespace name (a DNS label)',
  })
  KUBERNETES_NAMESPACE?: string;
  /** This service's address as the deployments' pods reach it (their model is fetched from it). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, {
    message: 'KUBERNETES_PLATFORM_URL must be an http:// or https:// address without a query or fragment',
  })
  KUBERNETES_PLATFORM_URL?: string;
  @IsOptional()
  @Matches(IMAGE_NAME, {
    message: 'KUBERNETES_CUBE_IMAGE must be an image name without a tag (registry.example.com/cube/cube)',
  })
  KUBERNETES_CUBE_IMAGE?: string;
  @IsOptional()
  @Matches(IMAGE_REFERENCE, {
    message: 'KUBERNETES_GIT_IMAGE must be an image reference with a tag or digest (alpine/git:2.47.2)',
  })
  KUBERNETES_GIT_IMAGE?: string;
  @IsOptional()
  @Matches(/^\s*[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?(\s*,\s*[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)*\s*$/, {
    message: 'KUBERNETES_IMAGE_PULL_SECRETS must be Secret names separated by commas',
  })
  KUBERNETES_IMAGE_PULL_SECRETS?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(50) KUBERNETES_REPLICAS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(50) KUBERNETES_STAGING_REPLICAS?: number;
  @IsOptional()
  @Matches(QUANTITY, { message: 'KUBERNETES_CPU_REQUEST must be a Kubernetes quantity (500m, 1)' })
  KUBERNETES_CPU_REQUEST?: string;
  @IsOptional()
  @Matches(QUANTITY, { message: 'KUBERNETES_CPU_LIMIT must be a Kubernetes quantity (2, 1500m)' })
  KUBERNETES_CPU_LIMIT?: string;
  @IsOptional()
  @Matches(QUANTITY, { message: 'KUBERNETES_MEMORY_REQUEST must be a Kubernetes quantity (1Gi, 512Mi)' })
  KUBERNETES_MEMORY_REQUEST?: string;
  @IsOptional()
  @Matches(QUANTITY, { message: 'KUBERNETES_MEMORY_LIMIT must be a Kubernetes quantity (2Gi)' })
  KUBERNETES_MEMORY_LIMIT?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(30) @Max(3600) KUBERNETES_PROGRESS_DEADLINE_SECONDS?: number;
  @IsOptional() @Transform(toBool) @IsBoolean() KUBERNETES_NETWORK_POLICY?: boolean;
  /** CIDRs the deployments' pods may reach beyond the public internet (checked in AppConfig). */
  @IsOptional() @IsString() KUBERNETES_EGRESS_ALLOWED_CIDRS?: string;
  @IsOptional() @IsString() KUBERNETES_RESYNC_CRON?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(600)
  @Max(86400)
  KUBERNETES_GIT_CREDENTIAL_TTL_SECONDS?: number;
  /** Set by Kubernetes in every pod: where the cluster's API server is (in-cluster configuration). */
  @IsOptional() @IsString() KUBERNETES_SERVICE_HOST?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535) KUBERNETES_SERVICE_PORT?: number;

  /** A secret (it holds the SMTP password): the messages below never repeat the value. */
  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s]+$/, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;
  @IsOptional()
  @Matches(/^([^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/, {
    message: 'SMTP_FROM must be an address, or a name and an address (Reports <reports@example.com>)',
  })
  SMTP_FROM?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(600000) SMTP_TIMEOUT_MS?: number;
  @IsOptional() @IsString() @MinLength(1) CHROMIUM_PATH?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(600000) RENDER_TIMEOUT_MS?: number;

  /** A deployment's Core Data API address, `{deploymentId}` and `{accountId}` filled in; checked in AppConfig. */
  @IsOptional() @IsString() DATA_API_URL_TEMPLATE?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(600000) DATA_API_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(3600000) DATA_API_WAIT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) @Max(1073741824) DATA_API_MAX_BYTES?: number;

  /** The dashboard link of notification emails; `{deploymentId}`, `{dashboardId}`, `{publicId}`, `{workbookId}`. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'DASHBOARD_URL_TEMPLATE must be an http:// or https:// address',
  })
  DASHBOARD_URL_TEMPLATE?: string;
  /** Bounds of scheduled notifications: recipients each, deliveries per account and hour, schedule's interval. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100000) NOTIFICATION_MAX_RECIPIENTS?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10000000)
  NOTIFICATION_MAX_DELIVERIES_PER_HOUR?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(720) NOTIFICATION_MIN_INTERVAL_MINUTES?: number;
  /** Dashboard exports (src/modules/dashboard-exports): exports in flight per account, how long a file is kept. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000) DASHBOARD_EXPORT_MAX_IN_FLIGHT?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(60) @Max(86400) DASHBOARD_EXPORT_TTL_SECONDS?: number;
  /** Outbound webhooks (src/modules/webhooks): endpoints per account, request timeout, retries, disabling, retention. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000) WEBHOOK_MAX_ENDPOINTS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(60000) WEBHOOK_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(168) WEBHOOK_RETRY_HOURS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000) WEBHOOK_DISABLE_AFTER_FAILURES?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(365) WEBHOOK_RETENTION_DAYS?: number;

  /** Python report runs (src/modules/python-runs). */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(32) PYTHON_POOL_SIZE?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(300000) PYTHON_RUN_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(256) @Max(16384) PYTHON_RUN_MEMORY_MB?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(86400) PYTHON_RUN_CACHE_SECONDS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(256) PYTHON_ACCOUNT_CONCURRENCY?: number;
  /** The sandbox of untrusted code (src/core/sandbox): model compiles and Python runs. */
  @IsOptional() @IsString() @MinLength(1) SANDBOX_BWRAP_PATH?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(19) SANDBOX_NICENESS?: number;
  /** The older name of SANDBOX_BWRAP_PATH, still read when that is not set. */
  @IsOptional() @IsString() @MinLength(1) PYTHON_BWRAP_PATH?: string;
}

/**
 * The variables the service reads: every property of {@link EnvSchema}, taken from its
 * validation metadata (each has at least `@IsOptional()`), so a variable declared there is read;
 * there is no second list to keep.
 */
export const ENV_KEYS: readonly (keyof EnvSchema)[] = [
  ...new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(EnvSchema, '', true, false)
      .map((m) => m.propertyName as keyof EnvSchema),
  ),
];
