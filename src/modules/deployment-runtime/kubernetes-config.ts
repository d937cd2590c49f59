import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubernetesConfig } from '../../core/config/app-config.js';

/** Where Kubernetes mounts a pod's service account: its token, the cluster's CA and the namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The client's configuration, the namespace to read, and where the API server is (for messages). */
export interface KubernetesTarget {
  kubeConfig: KubeConfig;
  namespace: string;
  server: string;
}

/** A configuration that cannot work: the process refuses to start with this message. */
export class KubernetesConfigError extends Error {}

/**
 * Builds the client's configuration the way kubectl users expect: the kubeconfig files of
 * `KUBECONFIG` (merged as kubectl merges them) when set, else the pod's service account
 * (in-cluster). The namespace is `KUBERNETES_NAMESPACE`, else the context's (or
 * the service account's), else `default`.
 *
 * `@kubernetes/client-node` 1.x refuses a plain `http://` API server unless its cluster says
 * `insecure-skip-tls-verify` (a flag about TLS, which plain HTTP does not have): such a cluster
 * gets the flag here, as kubectl needs none for it (`kubectl proxy`, local test servers).
 *
 * Messages never quote the kubeconfig: a YAML error is given by its reason and line only, since
 * the file holds credentials.
 */
export function kubernetesTarget(
  k8s: { KubeConfig: new () => KubeConfig },
  settings: Pick<KubernetesConfig, 'kubeconfig' | 'inCluster' | 'namespace'>,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): KubernetesTarget {
  const kubeConfig = new k8s.KubeConfig();
  let namespace: string | undefined;
  if (settings.kubeconfig) {
    const [firstFile, ...others] = settings.kubeconfig;
    loadFile(kubeConfig, firstFile);
    for (const file of others) {
      const more = new k8s.KubeConfig();
      loadFile(more, file);
      merge(kubeConfig, more);
    }
    const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
    if (!context) {
      throw new KubernetesConfigError(
        `KUBECONFIG: no current context (current-context "${kubeConfig.getCurrentContext() ?? ''}" is not among the contexts of ${settings.kubeconfig.join(', ')})`,
      );
    }
    if (!kubeConfig.getCurrentCluster()) {
      throw new KubernetesConfigError(
        `KUBECONFIG: the cluster "${context.cluster}" of context "${context.name}" is not defined`,
      );
    }
    namespace = context.namespace;
  } else if (settings.inCluster) {
    const token = path.join(serviceAccountDir, 'token');
    if (!fs.existsSync(token)) {
      throw new KubernetesConfigError(
        `DEPLOYMENT_RUNTIME=kubernetes in a pod without a service account token (${token}); ` +
          'mount one (automountServiceAccountToken) or set KUBECONFIG',
      );
    }
    const { host, port } = settings.inCluster;
    const scheme = [80, 8080, 8001].includes(port) ? 'http' : 'https';
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'in-cluster',
          server: `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
          caFile: path.join(serviceAccountDir, 'ca.crt'),
          skipTLSVerify: false,
        },
      ],
      // The token is read from its file again every minute: Kubernetes rotates it.
      users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: token } } }],
      contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' }],
      currentContext: 'in-cluster',
    });
    const file = path.join(serviceAccountDir, 'namespace');
    namespace = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : undefined;
  } else {
    throw new KubernetesConfigError('DEPLOYMENT_RUNTIME=kubernetes needs KUBECONFIG or a Kubernetes pod');
  }
  kubeConfig.clusters = kubeConfig.clusters.map((c) =>
    c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c,
  );
  return {
    kubeConfig,
    namespace: settings.namespace ?? (namespace || 'default'),
    server: kubeConfig.getCurrentCluster()!.server,
  };
}

/** kubectl's merge of `KUBECONFIG` files: the first file that sets a name or the current context wins. */
function merge(into: KubeConfig, more: KubeConfig): void {
  const missing = <T extends { name: string }>(have: T[], add: T[]) =>
    add.filter((a) => !have.some((h) => h.name === a.name));
  into.clusters = [...into.clusters, ...missing(into.clusters, more.clusters)];
  into.users = [...into.users, ...missing(into.users, more.users)];
  into.contexts = [...into.contexts, ...missing(into.contexts, more.contexts)];
  if (!into.currentContext) into.currentContext = more.currentContext;
}

function loadFile(kubeConfig: KubeConfig, file: string): void {
  try {
    kubeConfig.loadFromFile(file);
  } catch (err) {
    const e = err as Error & { reason?: string; mark?: { line: number } };
    const why =
      e.name === 'YAMLException'
        ? `not a valid kubeconfig (YAML: ${e.reason ?? 'syntax error'}${e.mark ? `, line ${e.mark.line + 1}` : ''})`
        : ((e as { code?: string }).code ?? `not a valid kubeconfig (${e.message.slice(0, 200)})`);
    throw new KubernetesConfigError(`KUBECONFIG: cannot read ${file}: ${why}`);
  }
}
