import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PORTS, SERVICE_NAMES } from '@slipway/contract';
import { DEFAULT_QUEUE_PREFIX, QUEUES } from '@slipway/messaging';
import type { PodSpecShape } from '@slipway/testing';
import { kubectlClientVersion } from '../src/kubectl.js';
import { findObject, objectId, renderKustomization, type K8sObject } from '../src/manifest.js';
import { K8S_DIR, REPO_ROOT } from '../src/paths.js';
import { podSpecOf } from '../src/pod-security.js';
import { schemaProblems } from '../src/schema-validation.js';

/** A build step drains within this on SIGTERM; build workers must be given longer to stop. */
const BUILD_STEP_DRAIN_SECONDS = 600;
const PLATFORM_NAMESPACE = 'slipway';
const APPS_NAMESPACE = 'slipway-apps';
const REQUIRED_CONFIG = ['PUBLIC_URL', 'AUTH_PUBLIC_URL', 'APPS_DOMAIN', 'APPS_SCHEME', 'LOG_LEVEL'];

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Container = {
  name: string;
  image: string;
  args?: string[];
  env?: Env[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: any;
  readinessProbe?: any;
};

const spec = (o: K8sObject) => o['spec'] as Record<string, any>;
const pod = (o: K8sObject) =>
  podSpecOf(o) as unknown as Omit<PodSpecShape, 'containers' | 'initContainers'> & {
    containers: Container[];
    initContainers?: Container[];
    serviceAccountName?: string;
    automountServiceAccountToken?: boolean;
    terminationGracePeriodSeconds?: number;
  };
const deployments = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'Deployment');
const platformDeployment = (objects: K8sObject[], name: string) => {
  const found = findObject(objects, 'Deployment', name);
  if (!found) throw new Error(`no Deployment ${name}`);
  return found;
};
const configMap = (objects: K8sObject[], name: string) => findObject(objects, 'ConfigMap', name)?.['data'] as Record<string, string>;

beforeAll(() => {
  // Which real kustomize rendered these manifests, for the test log.
  process.stdout.write(`${kubectlClientVersion()}\n`);
});

describe.each(['base', 'overlays/dev', 'overlays/production'])('k8s/%s', (dir) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = renderKustomization(join(K8S_DIR, dir));
  });

  it('renders with kustomize and every object validates against its Kubernetes JSON schema', async () => {
    expect(objects.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const object of objects) {
      for (const problem of await schemaProblems(object)) problems.push(`${objectId(object)}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  it('runs every service from one image with its command, port, probes and environment', () => {
    const images = new Set<string>();
    for (const name of SERVICE_NAMES) {
      const deployment = platformDeployment(objects, name);
      const template = pod(deployment);
      const container = template.containers.find((c) => c.name === name)!;
      images.add(container.image);
      expect(container.args).toEqual(['node', `apps/${name}/dist/main.js`]);
      expect(existsSync(join(REPO_ROOT, 'apps', name, 'src', 'main.ts'))).toBe(true);
      expect(container.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: DEFAULT_PORTS[name] })]);
      expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });

      const env = new Map((container.env ?? []).map((e) => [e.name, e]));
      expect(env.get('PORT')?.value).toBe(String(DEFAULT_PORTS[name]));
      expect(env.get('DATABASE_URL')?.valueFrom?.secretKeyRef?.name).toMatch(/^slipway-datastores/);
      expect(env.get('REDIS_URL')?.valueFrom?.secretKeyRef?.name).toMatch(/^slipway-datastores/);
      expect(env.get('SLIPWAY_MASTER_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: 'slipway-master-key', key: 'SLIPWAY_MASTER_KEY' });
      const configName = container.envFrom?.[0]?.configMapRef?.name;
      const config = configMap(objects, configName!);
      expect(Object.keys(config)).toEqual(expect.arrayContaining(REQUIRED_CONFIG));

      const migrate = template.initContainers?.find((c) => c.name === 'migrate');
      expect(migrate?.args).toEqual(['node', 'apps/launcher/dist/migrate.js']);
      expect(migrate?.image).toBe(container.image);
      expect(existsSync(join(REPO_ROOT, 'apps/launcher/src/migrate.ts'))).toBe(true);

      const service = findObject(objects, 'Service', name);
      expect(spec(service!)['ports']).toEqual([expect.objectContaining({ port: DEFAULT_PORTS[name], targetPort: 'http' })]);
      expect(spec(service!)['selector']).toEqual(spec(deployment)['selector']['matchLabels']);
    }
    expect(images.size).toBe(1);
  });

  it('gives the services that touch blobs the optional S3 settings secret, and no other service', () => {
    for (const name of SERVICE_NAMES) {
      const container = pod(platformDeployment(objects, name)).containers.find((c) => c.name === name)!;
      const secretRefs = (container.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef] : []));
      if (name === 'auth-service') expect(secretRefs).toEqual([]);
      else expect(secretRefs).toEqual([{ name: 'slipway-blob-storage', optional: true }]);
    }
  });

  it('gives every Deployment a PodDisruptionBudget selecting its pods', () => {
    for (const deployment of deployments(objects)) {
      const labels = spec(deployment)['template']['metadata']['labels'] as Record<string, string>;
      const pdb = objects.find(
        (o) => o.kind === 'PodDisruptionBudget' && Object.entries(spec(o)['selector']['matchLabels']).every(([k, v]) => labels[k] === v),
      );
      expect(pdb && objectId(pdb)).toBe(`PodDisruptionBudget ${PLATFORM_NAMESPACE}/${deployment.metadata.name}`);
    }
  });

  it('lets build workers finish a build step before they are killed', () => {
    const worker = pod(platformDeployment(objects, 'build-worker'));
    expect(worker.terminationGracePeriodSeconds).toBeGreaterThan(BUILD_STEP_DRAIN_SECONDS);
    for (const deployment of deployments(objects)) {
      expect(pod(deployment).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    }
  });

  it('routes the platform, auth and wildcard applications hosts of the ConfigMap through the Ingress', () => {
    const ingress = findObject(objects, 'Ingress', 'slipway')!;
    const config = configMap(objects, pod(platformDeployment(objects, 'gateway')).containers[0]!.envFrom![0]!.configMapRef!.name);
    const backendOf = (host: string) => (spec(ingress)['rules'] as any[]).find((r) => r.host === host)?.http.paths[0].backend.service;
    expect(backendOf(new URL(config['PUBLIC_URL']!).host)).toEqual({ name: 'gateway', port: { name: 'http' } });
    expect(backendOf(new URL(config['AUTH_PUBLIC_URL']!).host)).toEqual({ name: 'auth-service', port: { name: 'http' } });
    expect(backendOf(`*.${config['APPS_DOMAIN']!.split(',')[0]}`)).toEqual({ name: 'edge', port: { name: 'http' } });
    // Custom domains attached to applications reach the edge too.
    expect(spec(ingress)['defaultBackend'].service.name).toBe('edge');
  });

  it('grants the Kubernetes API only to the edge, and only Deployments, Services and Secrets in the applications namespace', () => {
    expect(objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    const roles = objects.filter((o) => o.kind === 'Role');
    expect(roles.map(objectId)).toEqual([`Role ${APPS_NAMESPACE}/slipway-runtime`]);
    const rules = roles[0]!['rules'] as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    expect(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))).sort()).toEqual([
      '/secrets',
      '/services',
      'apps/deployments',
    ]);
    // Secrets: only by name (the driver's own), never listed or watched.
    const secretRule = rules.find((r) => r.resources.includes('secrets'))!;
    expect(secretRule.verbs).not.toEqual(expect.arrayContaining(['list']));
    expect(secretRule.verbs).not.toEqual(expect.arrayContaining(['watch']));
    const binding = findObject(objects, 'RoleBinding', 'slipway-runtime')!;
    expect(binding.metadata.namespace).toBe(APPS_NAMESPACE);
    expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'slipway-runtime', namespace: PLATFORM_NAMESPACE }]);
    for (const deployment of deployments(objects)) {
      const template = pod(deployment);
      if (deployment.metadata.name === 'edge') {
        expect(template.serviceAccountName).toBe('slipway-runtime');
      } else {
        expect(template.serviceAccountName).not.toBe('slipway-runtime');
        expect(template.automountServiceAccountToken).toBe(false);
      }
    }
  });
});

describe('k8s/overlays/dev', () => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = renderKustomization(join(K8S_DIR, 'overlays/dev'));
  });

  it('runs Postgres and Redis as StatefulSets in the cluster, Redis with AOF and noeviction', () => {
    expect(
      objects
        .filter((o) => o.kind === 'StatefulSet')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['postgres', 'redis']);
    const redis = pod(findObject(objects, 'StatefulSet', 'redis')!).containers[0]!;
    expect(redis.args?.join(' ')).toContain('--appendonly yes');
    expect(redis.args?.join(' ')).toContain('--maxmemory-policy noeviction');
  });

  it('generates the datastore Secret the services reference, pointing at the in-cluster services', () => {
    const gateway = pod(platformDeployment(objects, 'gateway')).containers[0]!;
    const secretName = gateway.env!.find((e) => e.name === 'DATABASE_URL')!.valueFrom!.secretKeyRef!.name;
    const secret = findObject(objects, 'Secret', secretName)!;
    const data = Object.fromEntries(Object.entries(secret['data'] as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(new URL(data['DATABASE_URL']!).hostname).toBe('postgres.slipway.svc.cluster.local');
    expect(new URL(data['REDIS_URL']!).hostname).toBe('redis.slipway.svc.cluster.local');
    // Redis asks for a password (the Secret's), and the services' URL carries it.
    expect(new URL(data['REDIS_URL']!).password).toBe(data['REDIS_PASSWORD']);
    const redis = pod(findObject(objects, 'StatefulSet', 'redis')!).containers[0]!;
    expect(redis.args?.join(' ')).toContain('--requirepass $(REDIS_PASSWORD)');
    expect(redis.env?.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: secretName, key: 'REDIS_PASSWORD' });
    expect(data['REDIS_PASSWORD']!.length).toBeGreaterThan(8);
    expect(findObject(objects, 'Service', 'postgres')).toBeDefined();
    expect(findObject(objects, 'Service', 'redis')).toBeDefined();
    // The master key is never committed: only referenced.
    expect(findObject(objects, 'Secret', 'slipway-master-key')).toBeUndefined();
    expect(Object.keys(data)).not.toContain('SLIPWAY_MASTER_KEY');
  });
});

describe('k8s/overlays/production', () => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = renderKustomization(join(K8S_DIR, 'overlays/production'));
  });

  it('uses external Postgres and Redis: no StatefulSets and no committed Secrets', () => {
    expect(objects.filter((o) => o.kind === 'StatefulSet' || o.kind === 'Secret')).toEqual([]);
  });

  it('runs several replicas of every stateless service', () => {
    for (const name of ['gateway', 'auth-service', 'edge']) expect(spec(platformDeployment(objects, name))['replicas']).toBeGreaterThanOrEqual(2);
  });

  it('scales build workers with KEDA on the BullMQ wait list of the deploy queue', () => {
    const scaled = findObject(objects, 'ScaledObject', 'build-worker')!;
    expect(spec(scaled)['scaleTargetRef']).toMatchObject({ kind: 'Deployment', name: 'build-worker' });
    const trigger = spec(scaled)['triggers'][0];
    expect(trigger.type).toBe('redis');
    expect(trigger.metadata.listName).toBe(`${DEFAULT_QUEUE_PREFIX}:${QUEUES.deploy.name}:wait`);
    // KEDA owns the replica count, so `kubectl apply` must not reset it.
    expect(spec(platformDeployment(objects, 'build-worker'))['replicas']).toBeUndefined();
    const envNames = pod(platformDeployment(objects, 'build-worker')).containers[0]!.env!.map((e) => e.name);
    expect(envNames).toEqual(expect.arrayContaining([trigger.metadata.addressFromEnv, trigger.metadata.passwordFromEnv]));
  });

  it('serves every Ingress host over TLS', () => {
    const ingress = spec(findObject(objects, 'Ingress', 'slipway')!);
    const tlsHosts = (ingress['tls'] as { hosts: string[] }[]).flatMap((t) => t.hosts);
    expect(tlsHosts.sort()).toEqual((ingress['rules'] as { host: string }[]).map((r) => r.host).sort());
  });
});
