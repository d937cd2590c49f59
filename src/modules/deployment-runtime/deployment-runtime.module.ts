import { Logger, Module } from '@nestjs/common';
import { AppConfig, ConfigError } from '../../core/config/app-config.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DeploymentRuntime } from './deployment-runtime.js';
import { KubernetesConfigError, kubernetesTarget } from './kubernetes-config.js';
import { KubernetesRuntime } from './kubernetes.runtime.js';
import { PlatformRecordsRuntime } from './platform-records.runtime.js';
import { RuntimeController } from './runtime.controller.js';
import { RuntimeService } from './runtime.service.js';

/**
 * The runtime `DEPLOYMENT_RUNTIME` names. Only the API process serves the routes that read it, so
 * only there is the Kubernetes client loaded (it is large) and its configuration loaded and
 * checked: a kubeconfig that cannot work stops the API at start-up. The worker and the command
 * line keep the platform's records, which they never read either.
 */
async function connect(config: AppConfig, records: PlatformRecordsRuntime): Promise<DeploymentRuntime> {
  const { kind, kubernetes, timeoutMs } = config.runtime;
  if (kind !== 'kubernetes' || !kubernetes || config.role !== 'api') return records;
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
  const api = target.kubeConfig.makeApiClient(k8s.CoreV1Api);
  return new KubernetesRuntime(api, target, timeoutMs, k8s.Observable);
}

/**
 * Where deployments run, read through the {@link DeploymentRuntime} port: `GET
 * /deployments/{id}/pods` and `.../logs`. Adapters: Kubernetes, and the platform's own records
 * when no runtime is configured.
 */
@Module({
  imports: [DeploymentsModule],
  controllers: [RuntimeController],
  providers: [
    PlatformRecordsRuntime,
    { provide: DeploymentRuntime, inject: [AppConfig, PlatformRecordsRuntime], useFactory: connect },
    RuntimeService,
  ],
})
export class DeploymentRuntimeModule {}
