import type { V1Deployment, V1Secret, V1Service } from '@kubernetes/client-node';
import type { ReleaseToRun } from '../driver.js';
import { downloadScript, RESTRICTED_CONTAINER, restrictedPodContext } from './restricted-pod.js';

export interface KubernetesOptions {
  namespace: string;
  /** Image with Node and a shell; the release is unpacked into an emptyDir by an init container. */
  image: string;
  /** Where a pod downloads the release artifact (`.tar.gz`), with the bearer token below. */
  artifactUrl: (releaseId: string) => string;
  /** A fixed token, or one per release (the edge uses `releaseArtifactToken`). */
  artifactToken: string | ((releaseId: string) => string);
  resources?: { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } };
  /** Size limits of the pod's two writable places: the unpacked release and /tmp. */
  releaseSize?: string;
  tmpSize?: string;
}

/** The port an application listens on in its pod; the only one the edge may reach (k8s NetworkPolicy `allow-from-edge`). */
export const APP_PORT = 8080;
/** Every application pod runs as this uid/gid: not root, not the platform's 10001. */
export const APP_UID = 1000;
/** Set by the platform; an application variable of the same name does not override them. */
const PLATFORM_ENV = new Set(['PORT', 'NODE_ENV', 'HOME']);
const DEFAULT_RESOURCES = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } };

/** DNS-1123 name per release: `<slug>-<first 8 of the release id>`. */
export function releaseName(release: Pick<ReleaseToRun, 'slug' | 'releaseId'>): string {
  const slug =
    release.slug
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'app';
  return `${slug}-${release.releaseId.replace(/-/g, '').slice(0, 8)}`;
}

/**
 * Secret (the app's environment), Deployment and Service for one release: restricted pod
 * security, an explicit non-root uid, no service-account token, no service links, requests and
 * limits, size-limited emptyDirs for the release and /tmp, and the application port 8080.
 */
export function releaseManifests(release: ReleaseToRun, options: KubernetesOptions): { secret: V1Secret; deployment: V1Deployment; service: V1Service } {
  const name = releaseName(release);
  const labels = { 'app.kubernetes.io/name': release.slug, 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/release': release.releaseId };
  const selector = { 'slipway.dev/release': release.releaseId };
  const metadata = { name, namespace: options.namespace, labels };
  const fetchScript = downloadScript('ARTIFACT_URL', '/tmp/release.tar.gz', 'ARTIFACT_TOKEN');
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
      type: 'Opaque',
      stringData: {
        ...release.env,
        ARTIFACT_TOKEN: typeof options.artifactToken === 'string' ? options.artifactToken : options.artifactToken(release.releaseId),
      },
    },
    deployment: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata,
      spec: {
        replicas: 1,
        revisionHistoryLimit: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: restrictedPodContext(APP_UID),
            volumes: [
              { name: 'release', emptyDir: { sizeLimit: options.releaseSize ?? '1Gi' } },
              { name: 'tmp', emptyDir: { sizeLimit: options.tmpSize ?? '256Mi' } },
            ],
            initContainers: [
              {
                name: 'fetch-release',
                image: options.image,
                command: ['sh', '-c', `node -e "${fetchScript}" && tar -xzf /tmp/release.tar.gz -C /app`],
                env: [
                  { name: 'ARTIFACT_URL', value: options.artifactUrl(release.releaseId) },
                  { name: 'ARTIFACT_TOKEN', valueFrom: { secretKeyRef: { name, key: 'ARTIFACT_TOKEN' } } },
                ],
                volumeMounts: [
                  { name: 'release', mountPath: '/app' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
                resources: options.resources ?? DEFAULT_RESOURCES,
                securityContext: RESTRICTED_CONTAINER,
              },
            ],
            containers: [
              {
                name: 'app',
                image: options.image,
                workingDir: '/app',
                command: ['sh', '-c', release.startCommand],
                // The declared variables one by one from the Secret (not `envFrom`, which would
                // hand the app the artifact token too): its environment is exactly these.
                env: [
                  { name: 'PORT', value: String(APP_PORT) },
                  { name: 'NODE_ENV', value: 'production' },
                  { name: 'HOME', value: '/tmp' },
                  ...Object.keys(release.env)
                    .filter((key) => !PLATFORM_ENV.has(key))
                    .sort()
                    .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } })),
                ],
                ports: [{ name: 'http', containerPort: APP_PORT }],
                readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 2, failureThreshold: 3 },
                livenessProbe: { tcpSocket: { port: 'http' }, initialDelaySeconds: 10, periodSeconds: 10 },
                resources: options.resources ?? DEFAULT_RESOURCES,
                securityContext: RESTRICTED_CONTAINER,
                volumeMounts: [
                  { name: 'release', mountPath: '/app' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
          },
        },
      },
    },
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
  };
}
