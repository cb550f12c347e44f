import { join } from 'node:path';
import { renderKustomization, type K8sObject } from '../src/manifest.js';
import { NetworkPolicies, type AddressEndpoint, type Endpoint, type Protocol } from '../src/network-policy.js';
import { K8S_DIR } from '../src/paths.js';
import { BUILDS_NAMESPACE, clusterPods, platformPods, TENANT_CODE_NAMESPACES } from '../src/tenant-pods.js';

const address = (ip: string): AddressEndpoint => ({ kind: 'address', ip });
/** Somewhere on the internet, by IPv4 and IPv6. */
const INTERNET = [address('93.184.216.34'), address('2606:4700:4700::1111')];
/** Addresses tenant code must never reach: metadata, the API server's Service and node, a private datastore, the node's kubelet, a private IPv6 host. */
const PRIVATE = [
  address('169.254.169.254'),
  address('10.96.0.1'),
  address('172.18.0.2'),
  address('192.168.1.20'),
  address('100.64.0.10'),
  address('fd00::10'),
  address('fe80::1'),
];
/** The production overlay's managed Postgres (its patch) and a managed Redis on the same private network. */
const MANAGED_POSTGRES = address('10.20.0.5');
const MANAGED_REDIS = address('10.20.0.6');

describe.each(['overlays/dev', 'overlays/production'])('k8s/%s: what tenant code can reach', (dir) => {
  let objects: K8sObject[];
  let policies: NetworkPolicies;
  let platform: ReturnType<typeof platformPods>;
  const tenants = clusterPods();
  const can = (from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP') => policies.allows(from, to, port, protocol);
  const platformPod = (name: string) => {
    const found = platform.get(name);
    if (!found) throw new Error(`no workload ${name} in ${dir}`);
    return found;
  };

  beforeAll(() => {
    objects = renderKustomization(join(K8S_DIR, dir));
    policies = new NetworkPolicies(objects);
    platform = platformPods(objects);
  });

  it('denies everything by default in every namespace that runs tenant code', () => {
    for (const ns of TENANT_CODE_NAMESPACES) {
      const deny = objects.find(
        (o) =>
          o.kind === 'NetworkPolicy' &&
          o.metadata.namespace === ns &&
          JSON.stringify((o['spec'] as any).podSelector) === '{}' &&
          !(o['spec'] as any).ingress &&
          !(o['spec'] as any).egress,
      );
      expect([ns, deny && (deny['spec'] as any).policyTypes]).toEqual([ns, ['Ingress', 'Egress']]);
    }
    // Whatever its labels, a pod in the builds namespace reaches no application and the edge does not reach it.
    const stray = { kind: 'pod', namespace: BUILDS_NAMESPACE, labels: { anything: 'else' }, ip: '10.244.9.9' } as const;
    expect(can(stray, tenants.app, 8080)).toBe(false);
    expect(can(platformPod('edge'), stray, 8080)).toBe(false);
  });

  it('lets an application reach DNS, the outside world on any port, the edge and its sign-in service, and the ingress controller', () => {
    expect(can(tenants.app, tenants.kubeDns, 53, 'UDP')).toBe(true);
    expect(can(tenants.app, tenants.kubeDns, 53, 'TCP')).toBe(true);
    for (const outside of INTERNET) for (const port of [80, 443, 22, 587, 27017]) expect(can(tenants.app, outside, port)).toBe(true);
    expect(can(tenants.app, platformPod('edge'), 8080)).toBe(true);
    expect(can(tenants.app, platformPod('auth-service'), 3001)).toBe(true);
    expect(can(tenants.app, tenants.ingressController, 443)).toBe(true);
  });

  it('lets an application reach its own database server on 5432, and builds never', () => {
    const postgres = dir === 'overlays/dev' ? platformPod('postgres') : MANAGED_POSTGRES;
    expect(can(tenants.app, postgres, 5432)).toBe(true);
    expect(can(tenants.build, postgres, 5432)).toBe(false);
    expect(can(tenants.app, postgres, 5433)).toBe(false);
  });

  it('never lets an application or a build reach Redis, the gateway, the build workers or any other platform port', () => {
    const opened = new Set(['edge:8080', 'auth-service:3001', 'postgres:5432']);
    const reached: string[] = [];
    for (const [name, pod] of platform) {
      for (const port of [...pod.ports, 5432, 6379, 3000, 3001, 3003, 8080, 9229]) {
        if (can(tenants.app, pod, port) && !opened.has(`${name}:${port}`)) reached.push(`app → ${name}:${port}`);
        if (can(tenants.build, pod, port)) reached.push(`build → ${name}:${port}`);
      }
    }
    for (const datastore of [MANAGED_REDIS, ...(dir === 'overlays/production' ? [] : [MANAGED_POSTGRES])]) {
      for (const port of [6379, 5432])
        for (const from of [tenants.app, tenants.build]) if (can(from, datastore, port)) reached.push(`${from.namespace} → ${datastore.ip}:${port}`);
    }
    expect(reached).toEqual([]);
    if (dir === 'overlays/dev') expect(can(tenants.app, platformPod('redis'), 6379)).toBe(false);
  });

  it("keeps two walls: tenant egress alone, and the platform's ingress alone, each shut tenant code out of the platform", () => {
    const meant = new Set(['slipway-apps → edge:8080', 'slipway-apps → auth-service:3001', 'slipway-apps → postgres:5432']);
    const open: string[] = [];
    for (const [name, pod] of platform) {
      for (const port of new Set([...pod.ports, 5432, 6379, 3000, 3001, 3003, 8080])) {
        for (const from of [tenants.app, tenants.build]) {
          const hop = `${from.namespace} → ${name}:${port}`;
          if (meant.has(hop)) continue;
          if (policies.sends(from, pod, port)) open.push(`sends ${hop}`);
          if (policies.admits(from, pod, port)) open.push(`admits ${hop}`);
        }
      }
    }
    expect(open).toEqual([]);
  });

  it('never lets tenant code reach cloud metadata, the Kubernetes API, nodes or other private addresses', () => {
    for (const from of [tenants.app, tenants.build]) {
      for (const to of PRIVATE) {
        for (const port of [53, 80, 443, 6443, 10250, 6379])
          expect([from.namespace, to.ip, port, can(from, to, port)]).toEqual([from.namespace, to.ip, port, false]);
        // DNS goes to kube-dns, not to whatever answers on 53 inside the cluster or the node.
        expect([from.namespace, to.ip, 'udp/53', can(from, to, 53, 'UDP')]).toEqual([from.namespace, to.ip, 'udp/53', false]);
      }
      expect(can(from, tenants.kubeDns, 8080)).toBe(false);
    }
  });

  it('lets a build reach DNS and the outside world, and nothing of the platform, the applications or the ingress controller', () => {
    expect(can(tenants.build, tenants.kubeDns, 53, 'UDP')).toBe(true);
    for (const outside of INTERNET) for (const port of [80, 443, 22, 9418]) expect(can(tenants.build, outside, port)).toBe(true);
    for (const to of [tenants.app, tenants.ingressController, ...platform.values()])
      for (const port of [80, 443, 3000, 3001, 8080]) expect(can(tenants.build, to, port)).toBe(false);
  });

  it('lets only the edge reach an application, on the application port; nobody reaches a build', () => {
    expect(can(platformPod('edge'), tenants.app, 8080)).toBe(true);
    expect(can(platformPod('edge'), tenants.app, 9229)).toBe(false);
    const others = [tenants.neighbour, tenants.build, tenants.ingressController, ...[...platform].filter(([n]) => n !== 'edge').map(([, p]) => p)];
    // The application's own ingress wall, whatever the sender's egress says.
    for (const from of others) expect([objectLabel(from), policies.admits(from, tenants.app, 8080)]).toEqual([objectLabel(from), false]);
    for (const from of [tenants.app, tenants.neighbour, tenants.ingressController, ...platform.values()])
      expect(policies.admits(from, tenants.build, 8080)).toBe(false);
  });

  it('admits platform traffic from the ingress controller and the applications only where meant', () => {
    expect(can(tenants.ingressController, platformPod('gateway'), 3000)).toBe(true);
    expect(can(tenants.app, platformPod('gateway'), 3000)).toBe(false);
    expect(can(tenants.neighbour, platformPod('build-worker'), 3003)).toBe(false);
  });
});

function objectLabel(endpoint: Endpoint): string {
  return endpoint.kind === 'pod' ? `${endpoint.namespace}/${Object.values(endpoint.labels).join(',')}` : endpoint.ip;
}
