import type { KubernetesDriver, KubernetesDriverOptions } from './kubernetes-driver.js';

/**
 * The `kubernetes` driver with the cluster credentials found the usual way: in-cluster service
 * account, else `KUBECONFIG`, else `~/.kube/config` (`KubeConfig.loadFromDefault`).
 * `@kubernetes/client-node` is loaded only here, when that driver is chosen: it is the heaviest
 * module of the edge (about a second to load), and an edge restarted after a crash must be back
 * in well under two seconds.
 */
export async function kubernetesDriverFromEnvironment(options: Omit<KubernetesDriverOptions, 'kubeConfig'>): Promise<KubernetesDriver> {
  // One after the other: the driver imports the client too (and jest's ESM loader trips over two
  // concurrent imports of one module graph).
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { KubernetesDriver } = await import('./kubernetes-driver.js');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return new KubernetesDriver({ ...options, kubeConfig });
}
