import type { V1Container, V1Job, V1Secret } from '@kubernetes/client-node';
import { downloadScript, RESTRICTED_CONTAINER, restrictedPodContext } from './restricted-pod.js';

/** One build of one deployment, as a Kubernetes Job runs it. */
export interface BuildToRun {
  deploymentId: string;
  applicationId: string;
  /** Run in order in /workspace (e.g. install, then build); the first failure fails the Job. */
  steps: { name: 'install' | 'build'; command: string }[];
  /** The build's declared variables, and nothing else, are the steps' environment. */
  env: Record<string, string>;
  /** Presigned GET of the source tarball and presigned PUT of the output tarball: no credentials in the pod. */
  sourceUrl: string;
  outputUrl: string;
  /** Directory packed as the output, relative to the workspace (e.g. `dist`, `.` for all). */
  outputDir: string;
}

export interface BuildJobOptions {
  /** `slipway-builds`: default-deny, DNS and the outside world only (k8s/base/tenant-network-policies.yaml). */
  namespace: string;
  /** Image with Node, a shell and tar (the platform's image). */
  image: string;
  /** The whole Job, every step included; then Kubernetes kills the pod. */
  timeoutSeconds: number;
  resources?: { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } };
  workspaceSize?: string;
  tmpSize?: string;
}

/** Build pods run as this uid/gid: not root, not the platform's 10001, not the applications' 1000. */
export const BUILD_UID = 1100;
const DEFAULT_RESOURCES = { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } };
const SAFE_OUTPUT_DIR = /^(\.|[A-Za-z0-9_][A-Za-z0-9._-]*(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*)$/;

/** `build-<deployment id without dashes>`: unique per deployment, a valid DNS-1123 name. */
export function buildJobName(deploymentId: string): string {
  return `build-${deploymentId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 32)}`;
}

/**
 * A Secret pair and a Job for one build in its own pod: restricted pod security, an explicit
 * non-root uid, no service-account token, no service links, requests and limits, size-limited
 * emptyDirs, a deadline, no retries. The steps (tenant code) see only the build's variables
 * (Secret `<name>-env`); the presigned transfer URLs (Secret `<name>-transfer`) reach only the
 * platform's own fetch and upload containers. The output is packed without following links.
 */
export function buildJobManifests(build: BuildToRun, options: BuildJobOptions): { envSecret: V1Secret; transferSecret: V1Secret; job: V1Job } {
  if (!SAFE_OUTPUT_DIR.test(build.outputDir) || build.outputDir.split('/').includes('..')) {
    throw new Error(`output directory ${JSON.stringify(build.outputDir)} must be a plain relative path inside the workspace`);
  }
  if (build.steps.length === 0) throw new Error('a build Job needs at least one step');
  const name = buildJobName(build.deploymentId);
  const labels = {
    'app.kubernetes.io/managed-by': 'slipway',
    'slipway.dev/role': 'build',
    'slipway.dev/application': build.applicationId,
    'slipway.dev/deployment': build.deploymentId,
  };
  const meta = (suffix: string) => ({ name: `${name}${suffix}`, namespace: options.namespace, labels });
  const resources = options.resources ?? DEFAULT_RESOURCES;
  const mounts = [
    { name: 'workspace', mountPath: '/workspace' },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  const home = [{ name: 'HOME', value: '/tmp' }];
  const transfer = (key: string) => ({ name: key, valueFrom: { secretKeyRef: { name: `${name}-transfer`, key } } });
  const container = (containerName: string, command: string, env: V1Container['env']): V1Container => ({
    name: containerName,
    image: options.image,
    workingDir: '/workspace',
    command: ['sh', '-c', command],
    env,
    resources,
    securityContext: RESTRICTED_CONTAINER,
    volumeMounts: mounts,
  });
  const fetchSource = `node -e "${downloadScript('SOURCE_URL', '/tmp/source.tar.gz')}" && tar -xzf /tmp/source.tar.gz -C /workspace && rm /tmp/source.tar.gz`;
  // A linked output directory is refused here as the packer refuses it on one machine.
  const upload = `test ! -L '/workspace/${build.outputDir}' && tar -czf /tmp/output.tar.gz -C '/workspace/${build.outputDir}' . && node -e "fetch(process.env.OUTPUT_URL,{method:'PUT',body:require('fs').readFileSync('/tmp/output.tar.gz')}).then(r=>{if(!r.ok)throw new Error('upload '+r.status)})"`;
  const stepEnv = [
    ...home,
    ...Object.keys(build.env)
      .filter((key) => key !== 'HOME')
      .sort()
      .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: `${name}-env`, key } } })),
  ];
  return {
    envSecret: { apiVersion: 'v1', kind: 'Secret', metadata: meta('-env'), type: 'Opaque', stringData: { ...build.env } },
    transferSecret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta('-transfer'),
      type: 'Opaque',
      stringData: { SOURCE_URL: build.sourceUrl, OUTPUT_URL: build.outputUrl },
    },
    job: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta(''),
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: options.timeoutSeconds,
        ttlSecondsAfterFinished: 600,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: restrictedPodContext(BUILD_UID),
            volumes: [
              { name: 'workspace', emptyDir: { sizeLimit: options.workspaceSize ?? '10Gi' } },
              { name: 'tmp', emptyDir: { sizeLimit: options.tmpSize ?? '2Gi' } },
            ],
            // Init containers run one after another: fetch, then each step; the upload runs last.
            initContainers: [
              container('fetch-source', fetchSource, [...home, transfer('SOURCE_URL')]),
              ...build.steps.map((step) => container(step.name, step.command, stepEnv)),
            ],
            containers: [container('upload-output', upload, [...home, transfer('OUTPUT_URL')])],
          },
        },
      },
    },
  };
}
