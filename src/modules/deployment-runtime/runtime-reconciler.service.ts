import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { GitReadCredentials } from '../../core/auth/git-read-credentials.js';
import { AppConfig } from '../../core/config/app-config.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import { isNotFound } from '../../core/errors/not-found.js';
import { Installation } from '../../core/installation/installation.js';
import type { JobContext } from '../../core/queue/job-context.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { DataApiAddresses } from '../data-api-client/data-api-addresses.service.js';
import { API_SECRET_VARIABLE, environmentSecret } from '../data-api-client/data-api-keys.service.js';
import { DeployStates } from '../data-model/deploy-states.service.js';
import { ModelEnvironments } from '../data-model/model-environments.service.js';
import { DeploymentLifecycle } from '../deployments/deployment-lifecycle.js';
import { deploymentOwner, DeploymentsService } from '../deployments/deployments.service.js';
import { EnvVarsService } from '../deployments/env-vars.service.js';
import { ClusterError, type KubernetesCluster, type ListedObject } from './kubernetes-cluster.js';
import {
  environmentManifests,
  inApplyOrder,
  isOwned,
  LABEL,
  MANAGED_KINDS,
  objectName,
  ownedSelector,
  productionAddress,
  rolloutState,
  type EnvironmentManifests,
  type ManagedKind,
  type ManifestSettings,
} from './kubernetes-manifests.js';
import { RuntimeRolloutsRepository, type RolloutRecord } from './runtime-rollouts.repository.js';

/** The cluster the reconciler works on; null without `DEPLOYMENT_RUNTIME=kubernetes` (or on the command line). */
export const KUBERNETES_CLUSTER = Symbol('KUBERNETES_CLUSTER');

export interface ReconcilePayload {
  deploymentId: number;
  accountId: number;
  /** The change count it was queued for (done when a reconcile applied it); null: apply anyway (the resync). */
  generation: number | null;
}

/**
 * Makes the cluster hold what the platform says for one deployment: applies its environments'
 * objects, deletes what it no longer runs (all of it, once the deployment is gone), then follows
 * the rollout until every Deployment is available or failed. Reconciles of one deployment take
 * turns; each applies the platform's state as it is when it starts, so it is safe to run twice
 * and to run after a newer one.
 */
export const RECONCILE_JOB = defineJob<ReconcilePayload>('deployment.reconcile', {
  queue: 'default',
  attempts: 8,
  backoffMs: 5_000,
  timeoutMs: 30 * 60_000,
  concurrency: 4,
  run: { maxClaims: 5 },
});

export interface FollowPayload {
  deploymentId: number;
  accountId: number;
}

/**
 * Follows a deployment's rollouts (a list, then watches) until none is `deploying` or the
 * Deployments' progress deadline has passed, recording what the cluster reports. A job of its
 * own, queued with the apply that started the rollout: watches are idle connections, so many
 * run at once and never hold the slots that applies need.
 */
export const FOLLOW_JOB = defineJob<FollowPayload>('deployment.rollout-follow', {
  queue: 'default',
  attempts: 5,
  backoffMs: 5_000,
  timeoutMs: 70 * 60_000,
  concurrency: 32,
  run: { maxClaims: 5 },
});

/**
 * The periodic resync (`KUBERNETES_RESYNC_CRON`): a full reconcile of every deployment (which
 * corrects drift and refreshes the pods' git credentials), and the removal of objects of
 * deployments that are gone.
 */
export const RESYNC_JOB = defineJob<{ scheduledFor?: string }>('deployment.runtime-resync', {
  queue: 'default',
  attempts: 3,
  backoffMs: 10_000,
  timeoutMs: 10 * 60_000,
  concurrency: 1,
  run: { maxClaims: 3 },
});

/** The owner of the resync's schedule and runs. */
const RESYNC_OWNER = 'runtime:resync';
/** Deployments read per page by the resync. */
const RESYNC_PAGE = 500;
/** Longest one watch request stays open before it is opened again, seconds. */
const WATCH_SECONDS = 60;

@Injectable()
export class RuntimeReconciler implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RuntimeReconciler');
  private settings?: Promise<ManifestSettings>;
  /** Aborted when the process stops: a rollout being followed is left to the job's retry. */
  private readonly stopping = new AbortController();

  constructor(
    @Inject(KUBERNETES_CLUSTER) private readonly cluster: KubernetesCluster | null,
    private readonly config: AppConfig,
    private readonly db: Database,
    private readonly repository: RuntimeRolloutsRepository,
    private readonly jobs: JobQueue,
    private readonly schedules: JobSchedules,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly deployments: DeploymentsService,
    private readonly envVars: EnvVarsService,
    private readonly environments: ModelEnvironments,
    private readonly deployStates: DeployStates,
    private readonly addresses: DataApiAddresses,
    private readonly credentials: GitReadCredentials,
    private readonly installation: Installation,
    private readonly secrets: SecretBoxService,
  ) {}

  /** Whether this installation runs deployments (every role: a change anywhere queues a reconcile). */
  private get enabled(): boolean {
    return this.config.runtime.kubernetes !== null;
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    // A new deployment runs nothing until its first build succeeds, which is a change.
    this.lifecycle.register({
      changed: (accountId, deploymentId) => this.changed(accountId, deploymentId),
      deleted: (accountId, deploymentId) => this.removed(accountId, deploymentId),
    });
    this.deployStates.register(async (deploymentId, environmentIds) => {
      const rows = await this.repository.states(deploymentId, environmentIds);
      return new Map(rows.map(({ environmentId, ...state }) => [environmentId, state]));
    });
    if (this.cluster) {
      const namespace = this.cluster.namespace;
      this.addresses.register({
        baseUrl: (deploymentId) => productionAddress(deploymentId, namespace),
        setting: 'DEPLOYMENT_RUNTIME (the production Service of the deployment)',
      });
    }
  }

  /** The resync's schedule exists once, at the configured cron (API and workers make sure of it). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.enabled || this.config.role === 'cli') return;
    await this.schedules.ensure({
      owner: RESYNC_OWNER,
      job: RESYNC_JOB,
      cron: this.config.runtime.kubernetes!.reconcile.resyncCron,
      payload: {},
    });
  }

  onApplicationShutdown(): void {
    this.stopping.abort();
  }

  /** A change the deployment's cluster objects must follow: counted, and a reconcile queued, in its unit of work. */
  private async changed(accountId: number, deploymentId: number): Promise<void> {
    const generation = await this.repository.bump(accountId, deploymentId);
    await this.jobs.enqueue(
      RECONCILE_JOB,
      { deploymentId, accountId, generation },
      { accountId, owner: deploymentOwner(deploymentId) },
    );
  }

  /** A deleted deployment: its reconcile (after the commit, when it is gone) removes everything it ran. */
  private async removed(accountId: number, deploymentId: number): Promise<void> {
    await this.jobs.enqueue(
      RECONCILE_JOB,
      { deploymentId, accountId, generation: null },
      { accountId, owner: deploymentOwner(deploymentId) },
    );
  }

  @JobHandler(RECONCILE_JOB)
  async reconcile(payload: ReconcilePayload, ctx: JobContext): Promise<void> {
    const cluster = this.connected();
    await ctx.phase('apply');
    const settings = await this.manifestSettings();
    let applied: RolloutRecord[] | null;
    try {
      applied = await this.db.transaction(async () => {
        await this.repository.lock(payload.deploymentId);
        const target = await this.repository.target(payload.deploymentId);
        if (payload.generation !== null && target && target.applied >= payload.generation) return null;
        return this.apply(cluster, settings, payload, target?.generation ?? 0, ctx);
      });
    } catch (err) {
      if (err instanceof ClusterError) await this.recordFailure(payload, err, ctx);
      throw err;
    }
    if (applied === null) {
      await ctx.log('This change is applied already (a later reconcile, or this one before a restart)');
      // A rollout still under way is followed, also after a restart between its apply and its follower.
      if ((await this.repository.deploying(payload.deploymentId)).length > 0) await this.queueFollow(payload);
    }
  }

  /** Queues the follower of the deployment's rollouts, in the current unit of work. */
  private async queueFollow(payload: ReconcilePayload): Promise<void> {
    const { deploymentId, accountId } = payload;
    await this.jobs.enqueue(
      FOLLOW_JOB,
      { deploymentId, accountId },
      { accountId, owner: deploymentOwner(deploymentId) },
    );
  }

  /**
   * Applies the deployment's environments and deletes what it no longer runs, inside the unit of
   * work that holds the deployment's reconcile lock; answers the rollouts it recorded.
   */
  private async apply(
    cluster: KubernetesCluster,
    settings: ManifestSettings,
    payload: ReconcilePayload,
    generation: number,
    ctx: JobContext,
  ): Promise<RolloutRecord[]> {
    const { deploymentId, accountId } = payload;
    const selector = ownedSelector(settings.installationId, deploymentId);
    const existing = new Map<ManagedKind, ListedObject[]>();
    for (const kind of MANAGED_KINDS) existing.set(kind, (await cluster.list(kind, selector)).items);

    const wanted = await this.wanted(settings, accountId, deploymentId);
    const records: RolloutRecord[] = [];
    const keep = new Set<string>();
    for (const { environment, manifests } of wanted?.running ?? []) {
      for (const manifest of inApplyOrder(manifests)) {
        keep.add(`${manifest.kind}/${manifest.metadata.name}`);
        const ours = existing.get(manifest.kind)!.some((o) => o.metadata.name === manifest.metadata.name);
        const live = await cluster.apply(manifest, ours);
        if (manifest.kind === 'Deployment') {
          const state = rolloutState(live as Parameters<typeof rolloutState>[0]);
          records.push({
            environmentId: environment.id,
            objectName: manifest.metadata.name,
            status: state.status,
            reason: state.reason,
            commitSha: environment.commit,
            version: environment.version,
            objectGeneration: live.metadata.generation ?? null,
          });
        }
      }
      await ctx.log(
        `Applied ${environment.type} environment ${environment.id} (${environment.branch} at ` +
          `${environment.commit.slice(0, 12)}, version ${environment.version})`,
      );
    }
    // Environments that wait for their first build keep whatever runs (nothing, or an older build).
    // (Items of a list carry no `kind`: the list's kind names them.)
    for (const id of wanted?.waiting ?? []) {
      for (const [kind, objects] of existing) {
        for (const o of objects) {
          if (o.metadata.labels?.[LABEL.environment] === String(id)) keep.add(`${kind}/${o.metadata.name}`);
        }
      }
    }
    for (const kind of [...MANAGED_KINDS].reverse()) {
      for (const o of existing.get(kind)!) {
        if (keep.has(`${kind}/${o.metadata.name}`) || !isOwned(o.metadata.labels, settings.installationId))
          continue;
        await cluster.delete(kind, o.metadata.name);
        await ctx.log(`Deleted ${kind} ${o.metadata.name}`);
      }
    }
    if (wanted === null) {
      await ctx.log(`Deployment ${deploymentId} is gone: its objects are removed`);
      return records;
    }
    for (const r of records) await this.repository.record(accountId, deploymentId, r);
    await this.repository.applied(deploymentId, generation);
    if (records.some((r) => r.status === 'deploying')) await this.queueFollow(payload);
    return records;
  }

  /**
   * What the deployment should run: for each environment whose branch has a successful build,
   * its objects; the environments still waiting for one. Null when the deployment is gone.
   */
  private async wanted(
    settings: ManifestSettings,
    accountId: number,
    deploymentId: number,
  ): Promise<{
    running: Array<{
      environment: {
        id: number;
        type: 'production' | 'staging';
        branch: string;
        commit: string;
        version: string;
      };
      manifests: EnvironmentManifests;
    }>;
    waiting: number[];
  } | null> {
    let runnable;
    let version;
    let env;
    try {
      runnable = await this.environments.runnable(accountId, deploymentId);
      version = await this.deployments.runningVersion(accountId, deploymentId);
      env = await this.envVars.values(accountId, deploymentId);
    } catch (err) {
      if (isNotFound(err, 'Deployment')) return null;
      throw err;
    }
    const { gitCredentialTtlSeconds } = settings.reconcile;
    const credential = this.credentials.issue(
      accountId,
      deploymentId,
      credentialExpiry(gitCredentialTtlSeconds),
    );
    const running = [];
    const waiting = [];
    for (const e of runnable.environments) {
      if (!e.builtCommit || !version) {
        waiting.push(e.id);
        continue;
      }
      const ownEnv = new Map(env);
      const apiSecret = env.get(API_SECRET_VARIABLE);
      // A staging environment answers tokens signed with its own secret (docs/querying.md).
      if (e.type === 'staging' && apiSecret)
        ownEnv.set(API_SECRET_VARIABLE, environmentSecret(apiSecret, e.id));
      const environment = { id: e.id, type: e.type, branch: e.branch, commit: e.builtCommit, version };
      running.push({
        environment,
        manifests: environmentManifests(
          {
            deploymentId,
            environmentId: e.id,
            type: e.type,
            branch: e.branch,
            commit: e.builtCommit,
            version,
            projectRoot: runnable.projectRoot,
            env: ownEnv,
            gitCredential: credential,
          },
          settings,
        ),
      });
    }
    return { running, waiting };
  }

  /**
   * The follower ({@link FOLLOW_JOB}): until none of the deployment's rollouts is `deploying` or
   * the Deployments' progress deadline (plus a minute) has passed, a list, then a watch from its
   * resource version, again after each watch ends. What the cluster reports is recorded as it
   * comes; a Deployment still rolling out at the end is followed by the next resync's reconcile.
   */
  @JobHandler(FOLLOW_JOB)
  async follow(payload: FollowPayload, ctx: JobContext): Promise<void> {
    const cluster = this.connected();
    const { deploymentId } = payload;
    const settings = await this.manifestSettings();
    await ctx.phase('rollout');
    const selector = ownedSelector(settings.installationId, deploymentId);
    const until = Date.now() + (settings.reconcile.progressDeadlineSeconds + 60) * 1000;
    const observe = async (d: ListedObject) => {
      const state = rolloutState(d as Parameters<typeof rolloutState>[0]);
      await this.repository.observe(
        deploymentId,
        d.metadata.name,
        d.metadata.generation ?? 0,
        state.status,
        state.reason,
      );
    };
    while (Date.now() < until) {
      if (this.stopping.signal.aborted) {
        throw new Error('The process is stopping; the retry follows the rollout on');
      }
      const { items, resourceVersion } = await cluster.list('Deployment', selector);
      for (const d of items) await observe(d);
      if ((await this.repository.deploying(deploymentId)).length === 0) break;
      await ctx.throwIfCancelled();
      const stop = new AbortController();
      let pending = Promise.resolve();
      const seconds = Math.max(1, Math.min(WATCH_SECONDS, Math.ceil((until - Date.now()) / 1000)));
      try {
        await cluster.watchDeployments(
          selector,
          resourceVersion,
          seconds,
          (d) => {
            // Events are recorded in order, one at a time; the watch stops once nothing is deploying.
            pending = pending
              .then(() => observe(d))
              .then(async () => {
                if ((await this.repository.deploying(deploymentId)).length === 0) stop.abort();
              })
              .catch((err: unknown) => this.logger.warn({ err }, 'recording a rollout event failed'));
          },
          AbortSignal.any([stop.signal, this.stopping.signal]),
        );
      } catch (err) {
        // A broken or expired watch: list again.
        if (!(err instanceof ClusterError)) throw err;
        await ctx.log(`Watch ended: ${err.message}`, 'warn');
      }
      await pending;
    }
    const still = await this.repository.deploying(deploymentId);
    await ctx.log(
      still.length === 0
        ? 'Rollout finished'
        : `Still rolling out (${still.join(', ')}); the resync keeps following it`,
    );
  }

  /** Records a refusal or an outage on the environments being rolled out, then the job retries. */
  private async recordFailure(payload: ReconcilePayload, err: ClusterError, ctx: JobContext): Promise<void> {
    await ctx.log(err.message, 'error');
    try {
      const runnable = await this.environments.runnable(payload.accountId, payload.deploymentId);
      for (const e of runnable.environments.filter((x) => x.builtCommit)) {
        await this.repository.record(payload.accountId, payload.deploymentId, {
          environmentId: e.id,
          objectName: objectName(payload.deploymentId, e),
          status: 'failed',
          reason: err.message,
          commitSha: e.builtCommit,
          version: null,
          objectGeneration: null,
        });
      }
    } catch (inner) {
      if (!isNotFound(inner, 'Deployment')) throw inner;
    }
  }

  /** A full reconcile of every deployment, and the removal of what deleted deployments left. */
  @JobHandler(RESYNC_JOB)
  async resync(_payload: { scheduledFor?: string }, ctx: JobContext): Promise<void> {
    const cluster = this.connected();
    const settings = await this.manifestSettings();
    const live = new Set<number>();
    let after = 0;
    for (;;) {
      const page = await this.deployments.allDeployments(after, RESYNC_PAGE);
      for (const d of page) {
        live.add(d.id);
        await this.jobs.enqueue(
          RECONCILE_JOB,
          { deploymentId: d.id, accountId: d.accountId, generation: null },
          {
            accountId: d.accountId,
            owner: deploymentOwner(d.id),
            dedupeKey: `deployment.reconcile:resync:${d.id}`,
          },
        );
      }
      if (page.length < RESYNC_PAGE) break;
      after = page[page.length - 1].id;
    }
    await ctx.log(`Queued a reconcile of ${live.size} deployments`);
    let removed = 0;
    for (const kind of [...MANAGED_KINDS].reverse()) {
      const { items } = await cluster.list(kind, ownedSelector(settings.installationId));
      for (const o of items) {
        const id = Number(o.metadata.labels?.[LABEL.deployment]);
        if (Number.isInteger(id) && !live.has(id) && !(await this.deploymentExists(id))) {
          await cluster.delete(kind, o.metadata.name);
          removed += 1;
        }
      }
    }
    if (removed > 0) await ctx.log(`Removed ${removed} objects of deleted deployments`);
  }

  private async deploymentExists(id: number): Promise<boolean> {
    // A deployment made since the page was read is not an orphan.
    return (await this.deployments.allDeployments(id - 1, 1)).some((d) => d.id === id);
  }

  /**
   * The cluster, or a retryable failure in a process without one: the command line queues
   * reconciles (`add-release`) and, without Redis, would run them itself; the retry is left to
   * the API and the workers.
   */
  private connected(): KubernetesCluster {
    if (!this.cluster)
      throw new Error('No Kubernetes connection in this process; the job is retried elsewhere');
    return this.cluster;
  }

  /** Names, labels and keys of the objects, read once. */
  private manifestSettings(): Promise<ManifestSettings> {
    this.settings ??= (async () => ({
      installationId: (await this.installation.current()).id,
      namespace: this.cluster!.namespace,
      reconcile: this.config.runtime.kubernetes!.reconcile,
      checksumKey: this.secrets.derivedKey('runtime-env-checksum:v1'),
    }))().catch((err: unknown) => {
      this.settings = undefined;
      throw err;
    });
    return this.settings;
  }
}

/**
 * When a git read credential issued now expires: on a boundary of half its lifetime, at least
 * half a lifetime away, so credentials issued within one half are the same (a repeated apply
 * changes nothing) and the resync replaces them well before they expire.
 */
export function credentialExpiry(ttlSeconds: number, now = Date.now()): Date {
  const half = Math.floor(ttlSeconds / 2) * 1000;
  return new Date((Math.floor(now / half) + 2) * half);
}
