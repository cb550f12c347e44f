import { join } from 'node:path';
import { asPodTemplate, podSecurityProblems } from '@slipway/testing';
import { findObject, objectId, renderKustomization, type K8sObject } from '../src/manifest.js';
import { K8S_DIR } from '../src/paths.js';
import { podTemplateOf } from '../src/pod-security.js';
import { APPS_NAMESPACE, BUILDS_NAMESPACE, generatedTenantObjects, PLATFORM_NAMESPACE, TENANT_CODE_NAMESPACES } from '../src/tenant-pods.js';

/** The one pod that talks to the Kubernetes API: the edge, for the `kubernetes` runtime driver. */
const TOKEN_HOLDERS = new Set(['Deployment slipway/edge']);
const RUNTIME_ACCOUNT = 'slipway-runtime';

describe.each(['base', 'overlays/dev', 'overlays/production'])('k8s/%s', (dir) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = renderKustomization(join(K8S_DIR, dir));
  });

  it('keeps every pod template of every workload within Pod Security "restricted" and Slipway\'s own rules', () => {
    const workloads = objects.filter((o) => podTemplateOf(o));
    expect(workloads.length).toBeGreaterThanOrEqual(4);
    const problems = workloads.flatMap((o) =>
      podSecurityProblems(podTemplateOf(o)!, { allowServiceAccountToken: TOKEN_HOLDERS.has(objectId(o)) }).map((p) => `${objectId(o)}: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  it('keeps what the runtime driver and the build Job generator create within the same rules, in namespaces that enforce them', () => {
    const { app, build } = generatedTenantObjects();
    const generated = [
      { namespace: app.deployment.metadata!.namespace!, template: app.deployment.spec!.template },
      { namespace: build.job.metadata!.namespace!, template: build.job.spec!.template },
    ];
    for (const { namespace, template } of generated) {
      expect(podSecurityProblems(asPodTemplate(template))).toEqual([]);
      expect(findObject(objects, 'Namespace', namespace)?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    }
    // The edge creates application pods where the manifests say.
    const edge = (podTemplateOf(findObject(objects, 'Deployment', 'edge')!)!.spec.containers[0] as unknown as { env: { name: string; value?: string }[] }).env;
    expect(edge.find((e) => e.name === 'SLIPWAY_RUNTIME_NAMESPACE')?.value).toBe(APPS_NAMESPACE);
  });

  it('has the platform, applications and builds namespaces, each enforcing restricted at the latest version, and nothing elsewhere', () => {
    const namespaces = objects.filter((o) => o.kind === 'Namespace');
    expect(namespaces.map((n) => n.metadata.name).sort()).toEqual([...TENANT_CODE_NAMESPACES].sort());
    for (const ns of namespaces) {
      expect(ns.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' });
    }
    for (const o of objects.filter((x) => x.kind !== 'Namespace')) expect(TENANT_CODE_NAMESPACES).toContain(o.metadata.namespace);
  });

  it("mounts no service-account token: every account but the runtime driver's refuses it, and each namespace's default account does", () => {
    const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
    for (const account of accounts) {
      expect([objectId(account), account['automountServiceAccountToken']]).toEqual([objectId(account), account.metadata.name === RUNTIME_ACCOUNT]);
    }
    for (const ns of TENANT_CODE_NAMESPACES)
      expect(
        findObject(
          accounts.filter((a) => a.metadata.namespace === ns),
          'ServiceAccount',
          'default',
        ),
      ).toBeDefined();
    for (const workload of objects.filter((o) => podTemplateOf(o))) {
      const spec = podTemplateOf(workload)!.spec as { serviceAccountName?: string; automountServiceAccountToken?: boolean };
      const holdsToken = TOKEN_HOLDERS.has(objectId(workload));
      expect([objectId(workload), spec.serviceAccountName === RUNTIME_ACCOUNT]).toEqual([objectId(workload), holdsToken]);
    }
  });

  it('bounds every container in the tenant namespaces by default and at most, whoever creates the pod', () => {
    for (const ns of [APPS_NAMESPACE, BUILDS_NAMESPACE]) {
      const ranges = objects.filter((o) => o.kind === 'LimitRange' && o.metadata.namespace === ns);
      const container = ranges.flatMap((r) => (r['spec'] as { limits: { type: string }[] }).limits).find((l) => l.type === 'Container') as
        Record<string, Record<string, string>> | undefined;
      for (const field of ['default', 'defaultRequest', 'max']) {
        expect([ns, field, Object.keys(container?.[field] ?? {}).sort()]).toEqual([ns, field, ['cpu', 'ephemeral-storage', 'memory']]);
      }
    }
    expect(objects.some((o) => o.kind === 'LimitRange' && o.metadata.namespace === PLATFORM_NAMESPACE)).toBe(false);
  });
});
