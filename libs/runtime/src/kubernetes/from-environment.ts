import type { KubernetesDriver, KubernetesDriverOptions } from './kubernetes-driver.js';

/**
 * The `kubernetes` driver with the cluster credentials found the usual way: in-cluster service
 * account, else `KUBECONFIG`, else `~/.kube/config` (`KubeConfig.loadFromDefault`).
 * `@kubernetes/client-node` is loaded only here, when that driver is chosen: it is the heaviest
 * module of the edge (about a second to load), and an edge restarted after a crash must be back
 * in well under two seconds.
 */
export async function kubernetesDriverFromEnvironment(options: Omit<KubernetesDriverOptions, 'kubeConfig'>): Promise<KubernetesDriver> {
  const [{ KubeConfig }, { KubernetesDriver }] = await Promise.all([import('@kubernetes/client-node'), import('./kubernetes-driver.js')]);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return new KubernetesDriver({ ...options, kubeConfig });
}
