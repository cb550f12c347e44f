import { buildJobManifests, releaseManifests, type ReleaseToRun } from '@slipway/runtime';
import type { K8sObject } from './manifest.js';
import type { PodEndpoint } from './network-policy.js';
import { podTemplateOf } from './pod-security.js';

export const PLATFORM_NAMESPACE = 'slipway';
export const APPS_NAMESPACE = 'slipway-apps';
export const BUILDS_NAMESPACE = 'slipway-builds';
/** The namespaces where tenant code runs: applications, builds, and the platform's own (build workers sandbox steps in it). */
export const TENANT_CODE_NAMESPACES = [PLATFORM_NAMESPACE, APPS_NAMESPACE, BUILDS_NAMESPACE];

const release = (slug: string, releaseId: string): ReleaseToRun => ({
  releaseId,
  applicationId: '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e',
  slug,
  artifactKey: `releases/${releaseId}.tar.gz`,
  startCommand: 'node server.js',
  env: { DATABASE_URL: 'postgresql://app@db:5432/app' },
});

/** The objects the runtime driver and the build Job generator create, in the namespaces the overlay gives them. */
export function generatedTenantObjects() {
  const options = { image: 'slipway/slipway:0.1.0', artifactUrl: (id: string) => `http://edge.slipway.svc:8080/_slipway/artifacts/${id}`, artifactToken: 't' };
  const app = releaseManifests(release('shop', '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90'), { ...options, namespace: APPS_NAMESPACE });
  const neighbour = releaseManifests(release('blog', '7d1e0c2b-3a4f-4e5d-8c6b-9a0f1e2d3c4b'), { ...options, namespace: APPS_NAMESPACE });
  const build = buildJobManifests(
    {
      deploymentId: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
      applicationId: 'a',
      steps: [{ name: 'build', command: 'npm run build' }],
      env: {},
      sourceUrl: 'https://s/x',
      outputUrl: 'https://s/y',
      outputDir: 'dist',
    },
    { namespace: BUILDS_NAMESPACE, image: 'slipway/slipway:0.1.0', timeoutSeconds: 600 },
  );
  return { app, neighbour, build };
}

let nextIp = 10;
const podIp = () => `10.244.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 2}`;
const endpoint = (namespace: string, labels: Record<string, string> | undefined): PodEndpoint => ({
  kind: 'pod',
  namespace,
  labels: labels ?? {},
  ip: podIp(),
});

/** Every pod a rendered overlay runs, by workload name, as a network endpoint with its template's labels. */
export function platformPods(objects: K8sObject[]): Map<string, PodEndpoint & { ports: number[] }> {
  const pods = new Map<string, PodEndpoint & { ports: number[] }>();
  for (const object of objects) {
    const template = podTemplateOf(object) as
      { metadata?: { labels?: Record<string, string> }; spec: { containers: { ports?: { containerPort: number }[] }[] } } | undefined;
    if (!template) continue;
    const ports = template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
    pods.set(object.metadata.name, { ...endpoint(object.metadata.namespace!, template.metadata?.labels), ports });
  }
  return pods;
}

/** Tenant pods (what the driver and the Job generator create) and the cluster's own pods a policy names. */
export function clusterPods() {
  const { app, neighbour, build } = generatedTenantObjects();
  return {
    app: endpoint(APPS_NAMESPACE, app.deployment.spec!.template.metadata!.labels),
    neighbour: endpoint(APPS_NAMESPACE, neighbour.deployment.spec!.template.metadata!.labels),
    build: endpoint(BUILDS_NAMESPACE, build.job.spec!.template.metadata!.labels),
    kubeDns: endpoint('kube-system', { 'k8s-app': 'kube-dns' }),
    ingressController: endpoint('ingress-nginx', { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' }),
  };
}
