import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { UnhealthyReleaseError, type ReleaseToRun, type RunningRelease, type RuntimeDriver } from '../driver.js';
import { releaseManifests, releaseName, type KubernetesOptions } from './manifests.js';

export interface KubernetesDriverOptions extends KubernetesOptions {
  kubeConfig: KubeConfig;
  readyTimeoutMs: number;
  pollMs?: number;
}

function isConflict(error: unknown): boolean {
  return (error as { code?: number }).code === 409;
}

/**
 * The `kubernetes` runtime driver: each release becomes a Secret (its environment), a Deployment
 * (restricted security context, requests/limits, readiness probe) and a ClusterIP Service.
 * `start` resolves once the Deployment is available; the edge then proxies to the Service.
 */
export class KubernetesDriver implements RuntimeDriver {
  readonly name = 'kubernetes' as const;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;

  constructor(private readonly options: KubernetesDriverOptions) {
    this.apps = options.kubeConfig.makeApiClient(AppsV1Api);
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
  }

  async start(release: ReleaseToRun): Promise<RunningRelease> {
    // Pods run the image's Node (the platform's own, like this edge's): a release built on another
    // one is refused here rather than run on a Node it was not built with (issue 18: left to do).
    const platform = process.version.replace(/^v/, '');
    if (release.nodeVersion && release.nodeVersion !== platform) {
      throw new Error(
        `release ${release.releaseId} was built on Node.js ${release.nodeVersion}; the kubernetes driver runs releases on the image's Node.js ${platform} only`,
      );
    }
    const { namespace } = this.options;
    const name = releaseName(release);
    const { secret, deployment, service } = releaseManifests(release, this.options);
    await this.core
      .createNamespacedSecret({ namespace, body: secret })
      .catch((e: unknown) => (isConflict(e) ? this.core.replaceNamespacedSecret({ name, namespace, body: secret }) : Promise.reject(e)));
    await this.apps
      .createNamespacedDeployment({ namespace, body: deployment })
      .catch((e: unknown) => (isConflict(e) ? this.apps.replaceNamespacedDeployment({ name, namespace, body: deployment }) : Promise.reject(e)));
    await this.core.createNamespacedService({ namespace, body: service }).catch((e: unknown) => (isConflict(e) ? undefined : Promise.reject(e)));
    const running: RunningRelease = {
      releaseId: release.releaseId,
      host: `${name}.${namespace}.svc.cluster.local`,
      port: 80,
      logTail: () => '',
      stop: async () => {
        await this.apps.deleteNamespacedDeployment({ name, namespace }).catch(() => undefined);
        await this.core.deleteNamespacedService({ name, namespace }).catch(() => undefined);
        await this.core.deleteNamespacedSecret({ name, namespace }).catch(() => undefined);
      },
    };
    const deadline = Date.now() + this.options.readyTimeoutMs;
    let last = 'no status yet';
    while (Date.now() < deadline) {
      const current = await this.apps.readNamespacedDeploymentStatus({ name, namespace });
      const status = current.status ?? {};
      const wanted = current.spec?.replicas ?? 1;
      if (
        (status.observedGeneration ?? 0) >= (current.metadata?.generation ?? 1) &&
        (status.updatedReplicas ?? 0) >= wanted &&
        (status.availableReplicas ?? 0) >= wanted
      )
        return running;
      last = (status.conditions ?? []).map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join('; ') || last;
      await new Promise((r) => setTimeout(r, this.options.pollMs ?? 1000));
    }
    await running.stop();
    throw new UnhealthyReleaseError(
      `deployment ${namespace}/${name} did not become available within ${Math.round(this.options.readyTimeoutMs / 1000)} s`,
      last,
    );
  }
}
