import { asPodTemplate, podSecurityProblems, restrictedProblems } from '@slipway/testing';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Secret } from 'kubernetes-models/v1/Secret';
import type { ReleaseToRun } from '../driver.js';
import { BUILD_UID, buildJobManifests, buildJobName, type BuildToRun } from './build-job.js';
import { APP_PORT, APP_UID, releaseManifests, type KubernetesOptions } from './manifests.js';

const PLATFORM_UID = 10001;
const release: ReleaseToRun = {
  releaseId: '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90',
  applicationId: '5d0c2a8e-1b7f-4e3a-9c6d-7a1e2b3c4d5e',
  slug: 'Shop_Front',
  artifactKey: 'releases/0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90.tar.gz',
  startCommand: 'npm run start',
  env: { STRIPE_KEY: 'sk_test_canary', DATABASE_URL: 'postgresql://app_shop:pw-canary@db:5432/app_shop', PORT: '1', NODE_ENV: 'development' },
};
const options: KubernetesOptions = {
  namespace: 'slipway-apps',
  image: 'node:20-slim',
  artifactUrl: (id) => `http://edge.slipway.svc:8080/_slipway/artifacts/${id}`,
  artifactToken: (id) => `token-canary-${id}`,
};
const build: BuildToRun = {
  deploymentId: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
  applicationId: release.applicationId,
  steps: [
    { name: 'install', command: 'npm ci' },
    { name: 'build', command: 'npm run build' },
  ],
  env: { NEXT_PUBLIC_API: 'https://api.example.com', BUILD_SECRET: 'build-canary' },
  sourceUrl: 'https://blobs.example.com/sources/x.tar.gz?X-Amz-Signature=source-canary',
  outputUrl: 'https://blobs.example.com/outputs/x.tar.gz?X-Amz-Signature=output-canary',
  outputDir: 'dist',
};
const buildOptions = { namespace: 'slipway-builds', image: 'slipway/slipway:0.1.0', timeoutSeconds: 900 };

describe('what the kubernetes driver generates keeps Pod Security "restricted"', () => {
  const { deployment } = releaseManifests(release, options);
  const { job } = buildJobManifests(build, buildOptions);
  const pods = { 'release Deployment': deployment.spec!.template, 'build Job': job.spec!.template };

  it.each(Object.entries(pods))("the %s pod passes every restricted rule and Slipway's own (no token, read-only root, bounded /tmp, limits)", (_, template) => {
    expect(podSecurityProblems(asPodTemplate(template))).toEqual([]);
    expect(template.spec!.automountServiceAccountToken).toBe(false);
    expect(template.spec!.enableServiceLinks).toBe(false);
    expect(template.spec!.hostUsers).toBeUndefined();
  });

  it('with other options too (resources, sizes) — and a resources override can only move the numbers', () => {
    const custom = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } };
    const { deployment: other } = releaseManifests({ ...release, slug: '---' }, { ...options, resources: custom, tmpSize: '1Gi', releaseSize: '4Gi' });
    const { job: otherJob } = buildJobManifests(
      { ...build, outputDir: '.', steps: [{ name: 'build', command: 'make' }] },
      { ...buildOptions, resources: custom, workspaceSize: '1Gi' },
    );
    expect(podSecurityProblems(asPodTemplate(other.spec!.template))).toEqual([]);
    expect(podSecurityProblems(asPodTemplate(otherJob.spec!.template))).toEqual([]);
  });

  it("runs applications and builds as their own non-root uids, neither the platform's", () => {
    expect(deployment.spec!.template.spec!.securityContext).toMatchObject({ runAsUser: APP_UID, runAsGroup: APP_UID, runAsNonRoot: true });
    expect(job.spec!.template.spec!.securityContext).toMatchObject({ runAsUser: BUILD_UID, runAsGroup: BUILD_UID, runAsNonRoot: true });
    expect(new Set([APP_UID, BUILD_UID, PLATFORM_UID, 0]).size).toBe(4);
  });

  it('the check itself is not a rubber stamp: a privileged sidecar in the generated pod is refused', () => {
    const template = structuredClone(deployment.spec!.template);
    template.spec!.containers.push({ name: 'sidecar', image: 'x', securityContext: { privileged: true } });
    expect(restrictedProblems(asPodTemplate(template))).toEqual(
      expect.arrayContaining(['container sidecar: Privileged Containers: privileged must not be true']),
    );
  });
});

describe('release pods', () => {
  const { deployment, secret } = releaseManifests(release, options);
  const pod = deployment.spec!.template.spec!;
  const app = pod.containers[0]!;

  it('listen on the application port only, the one the edge may reach', () => {
    expect(app.ports).toEqual([{ name: 'http', containerPort: APP_PORT }]);
    expect(pod.containers).toHaveLength(1);
  });

  it('give the app exactly its declared variables, never the artifact token, and keep values out of the pod spec', () => {
    const names = app.env!.map((e) => e.name);
    expect(names).toEqual(['PORT', 'NODE_ENV', 'HOME', 'DATABASE_URL', 'STRIPE_KEY']);
    expect(app.env!.find((e) => e.name === 'PORT')!.value).toBe(String(APP_PORT));
    expect(app.env!.find((e) => e.name === 'NODE_ENV')!.value).toBe('production');
    expect(app.envFrom).toBeUndefined();
    expect(JSON.stringify(deployment)).not.toMatch(/canary/);
    expect(secret.stringData!['ARTIFACT_TOKEN']).toBe(`token-canary-${release.releaseId}`);
    const fetch = pod.initContainers![0]!;
    expect(fetch.env!.map((e) => e.name)).toEqual(['ARTIFACT_URL', 'ARTIFACT_TOKEN']);
  });
});

describe('build Jobs', () => {
  const { job, envSecret, transferSecret } = buildJobManifests(build, buildOptions);
  const pod = job.spec!.template.spec!;

  it('validate against the Kubernetes schemas, never retry, stop at their deadline and clean up after themselves', () => {
    for (const object of [job]) expect(() => new Job(object as never).validate()).not.toThrow();
    for (const object of [envSecret, transferSecret]) expect(() => new Secret(object as never).validate()).not.toThrow();
    expect(job.metadata).toMatchObject({ name: buildJobName(build.deploymentId), namespace: 'slipway-builds' });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900, ttlSecondsAfterFinished: 600 });
    expect(pod.restartPolicy).toBe('Never');
  });

  it('run fetch, the steps in order, then the upload; tenant steps see the build variables only, never the transfer URLs', () => {
    expect(pod.initContainers!.map((c) => c.name)).toEqual(['fetch-source', 'install', 'build']);
    expect(pod.containers.map((c) => c.name)).toEqual(['upload-output']);
    for (const step of pod.initContainers!.slice(1)) {
      expect(step.env!.map((e) => e.name)).toEqual(['HOME', 'BUILD_SECRET', 'NEXT_PUBLIC_API']);
      expect(step.env!.filter((e) => e.valueFrom).every((e) => e.valueFrom!.secretKeyRef!.name === `${job.metadata!.name}-env`)).toBe(true);
      expect(step.envFrom).toBeUndefined();
    }
    expect(pod.initContainers![0]!.env!.map((e) => e.name)).toEqual(['HOME', 'SOURCE_URL']);
    expect(pod.containers[0]!.env!.map((e) => e.name)).toEqual(['HOME', 'OUTPUT_URL']);
    expect(JSON.stringify(job)).not.toMatch(/canary/);
    expect(transferSecret.stringData).toEqual({ SOURCE_URL: build.sourceUrl, OUTPUT_URL: build.outputUrl });
  });

  it('listen on nothing', () => {
    for (const c of [...pod.initContainers!, ...pod.containers]) expect(c.ports).toBeUndefined();
  });

  it.each(['../etc', '/etc', 'dist/../..', "dist'; rm -rf /; '", '', 'a b'])('refuse the output directory %j', (outputDir) => {
    expect(() => buildJobManifests({ ...build, outputDir }, buildOptions)).toThrow(/must be a plain relative path/);
  });
});
