import type { K8sObject } from './manifest.js';
import { inCidr, NetworkPolicies, selectorMatches, type PodEndpoint } from './network-policy.js';

const policy = (namespace: string, name: string, spec: Record<string, unknown>): K8sObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name, namespace },
  spec,
});
const pod = (namespace: string, labels: Record<string, string>, ip: string): PodEndpoint => ({ kind: 'pod', namespace, labels, ip });
const web = pod('a', { app: 'web' }, '10.244.0.2');
const db = pod('b', { app: 'db' }, '10.244.0.3');
const internet = { kind: 'address', ip: '93.184.216.34' } as const;

describe('NetworkPolicies', () => {
  it('allows everything when no policy selects either pod', () => {
    expect(new NetworkPolicies([]).allows(web, db, 5432)).toBe(true);
  });

  it('denies both ways under a default deny, and needs egress AND ingress to be opened', () => {
    const deny = [
      policy('a', 'deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }),
      policy('b', 'deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }),
    ];
    const egress = policy('a', 'out', {
      podSelector: { matchLabels: { app: 'web' } },
      policyTypes: ['Egress'],
      egress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'b' } } }], ports: [{ port: 5432 }] }],
    });
    const ingress = policy('b', 'in', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: 'web' } } }] }] });
    expect(new NetworkPolicies(deny).allows(web, db, 5432)).toBe(false);
    expect(new NetworkPolicies([...deny, egress]).allows(web, db, 5432)).toBe(false);
    expect(new NetworkPolicies([...deny, egress, ingress]).allows(web, db, 5432)).toBe(true);
    expect(new NetworkPolicies([...deny, egress, ingress]).allows(web, db, 5433)).toBe(false);
    expect(new NetworkPolicies([...deny, egress, ingress]).allows(web, db, 5432, 'UDP')).toBe(false);
    expect(new NetworkPolicies([...deny, egress, ingress]).allows(db, web, 5432)).toBe(false);
  });

  it('reads a podSelector without namespaceSelector as "this namespace only"', () => {
    const deny = policy('b', 'deny', { podSelector: {}, policyTypes: ['Ingress'] });
    const sameNs = policy('b', 'in', { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }] });
    expect(new NetworkPolicies([deny, sameNs]).allows(web, db, 1)).toBe(false);
    expect(new NetworkPolicies([deny, sameNs]).allows(pod('b', { app: 'web' }, '10.244.0.9'), db, 1)).toBe(true);
  });

  it('matches ipBlocks with their exceptions, for addresses and (permissively) pod IPs, IPv4 and IPv6', () => {
    const deny = policy('a', 'deny', { podSelector: {}, policyTypes: ['Egress'] });
    const out = policy('a', 'out', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }, { ipBlock: { cidr: '::/0', except: ['fc00::/7'] } }] }],
    });
    const policies = new NetworkPolicies([deny, out]);
    expect(policies.allows(web, internet, 443)).toBe(true);
    expect(policies.allows(web, { kind: 'address', ip: '10.1.2.3' }, 443)).toBe(false);
    expect(policies.allows(web, db, 5432)).toBe(false);
    expect(policies.allows(web, { kind: 'address', ip: '2606:4700::1111' }, 443)).toBe(true);
    expect(policies.allows(web, { kind: 'address', ip: 'fd00::1' }, 443)).toBe(false);
    expect(inCidr('172.31.255.255', '172.16.0.0/12')).toBe(true);
    expect(inCidr('172.32.0.0', '172.16.0.0/12')).toBe(false);
  });

  it('evaluates port ranges and selector expressions, and refuses named ports it cannot check', () => {
    expect(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] }, { app: 'web' })).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, { app: 'web' })).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, { app: 'web' })).toBe(true);
    const ranged = policy('a', 'r', { podSelector: {}, policyTypes: ['Egress'], egress: [{ ports: [{ port: 8000, endPort: 8100 }] }] });
    expect(new NetworkPolicies([ranged]).allows(web, internet, 8080)).toBe(true);
    expect(new NetworkPolicies([ranged]).allows(web, internet, 8101)).toBe(false);
    const named = policy('a', 'n', { podSelector: {}, policyTypes: ['Egress'], egress: [{ ports: [{ port: 'http' }] }] });
    expect(() => new NetworkPolicies([named]).allows(web, internet, 80)).toThrow(/named port/);
  });
});
