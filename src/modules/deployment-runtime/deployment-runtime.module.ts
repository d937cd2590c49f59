import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig, ConfigError } from '../../core/config/app-config.js';
import { declareJobs } from '../../core/queue/job-definition.js';
import { DataApiClientModule } from '../data-api-client/data-api-client.module.js';
import { DataModelModule } from '../data-model/data-model.module.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DeploymentRuntime } from './deployment-runtime.js';
import { RuntimeRollout } from './entities/runtime-rollout.entity.js';
import { RuntimeTarget } from './entities/runtime-target.entity.js';
import { KubernetesCluster, type KubernetesApis } from './kubernetes-cluster.js';
import { KubernetesConfigError, kubernetesTarget, type KubernetesTarget } from './kubernetes-config.js';
import { KubernetesRuntime } from './kubernetes.runtime.js';
import { PlatformRecordsRuntime } from './platform-records.runtime.js';
import { RuntimeController } from './runtime.controller.js';
import { RuntimeService } from './runtime.service.js';
import {
  FOLLOW_JOB,
  KUBERNETES_CLUSTER,
  RECONCILE_JOB,
  RESYNC_JOB,
  RuntimeReconciler,
} from './runtime-reconciler.service.js';
import { RuntimeRolloutsRepository } from './runtime-rollouts.repository.js';

/** The client of the configured cluster, loaded and checked once per process. */
const KUBERNETES_CONNECTION = Symbol('KUBERNETES_CONNECTION');

interface KubernetesConnection {
  target: KubernetesTarget;
  apis: KubernetesApis;
}

/**
 * The cluster `DEPLOYMENT_RUNTIME=kubernetes` names, for the API (pods and logs, and jobs when it
 * runs them) and the workers (the reconcile jobs): the client (it is large) is loaded there only,
 * and a kubeconfig that cannot work stops the process at start-up. The command line has none: it
 * only queues reconciles.
 */
async function connect(config: AppConfig): Promise<KubernetesConnection | null> {
  const { kind, kubernetes } = config.runtime;
  if (kind !== 'kubernetes' || !kubernetes || config.role === 'cli') return null;
  const k8s = await import('@kubernetes/client-node');
  let target;
  try {
    target = kubernetesTarget(k8s, kubernetes);
  } catch (err) {
    if (err instanceof KubernetesConfigError)
      throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
  const logger = new Logger('Runtime');
  logger.log(`Deployment runtime: Kubernetes at ${target.server}, namespace ${target.namespace}`);
  if (target.server.startsWith('http:')) {
    logger.warn('The Kubernetes API server is plain http://: its credentials travel unencrypted');
  }
  const kc = target.kubeConfig;
  return {
    target,
    apis: {
      core: kc.makeApiClient(k8s.CoreV1Api),
      apps: kc.makeApiClient(k8s.AppsV1Api),
      networking: kc.makeApiClient(k8s.NetworkingV1Api),
      watch: new k8s.Watch(kc),
      observable: k8s.Observable,
    },
  };
}

/**
 * Where deployments run. Reads through the {@link DeploymentRuntime} port (`GET
 * /deployments/{id}/pods` and `.../logs`: Kubernetes, or the platform's own records when no
 * runtime is configured), and with `DEPLOYMENT_RUNTIME=kubernetes` runs them: the reconcile and
 * resync jobs of {@link RuntimeReconciler} keep the cluster holding what the platform says.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([RuntimeTarget, RuntimeRollout]),
    DeploymentsModule,
    DataModelModule,
    DataApiClientModule,
  ],
  controllers: [RuntimeController],
  providers: [
    PlatformRecordsRuntime,
    { provide: KUBERNETES_CONNECTION, inject: [AppConfig], useFactory: connect },
    {
      provide: KUBERNETES_CLUSTER,
      inject: [KUBERNETES_CONNECTION, AppConfig],
      useFactory: (conn: KubernetesConnection | null, config: AppConfig) =>
        conn ? new KubernetesCluster(conn.apis, conn.target.namespace, config.runtime.timeoutMs) : null,
    },
    {
      provide: DeploymentRuntime,
      inject: [KUBERNETES_CONNECTION, AppConfig, PlatformRecordsRuntime],
      useFactory: (conn: KubernetesConnection | null, config: AppConfig, records: PlatformRecordsRuntime) =>
        conn && config.role === 'api'
          ? new KubernetesRuntime(conn.apis.core, conn.target, config.runtime.timeoutMs, conn.apis.observable)
          : records,
    },
    RuntimeService,
    RuntimeRolloutsRepository,
    RuntimeReconciler,
    declareJobs(RECONCILE_JOB, FOLLOW_JOB, RESYNC_JOB),
  ],
})
export class DeploymentRuntimeModule {}
