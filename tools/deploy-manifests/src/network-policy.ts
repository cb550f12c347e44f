import { BlockList, isIPv6 } from 'node:net';
import type { K8sObject } from './manifest.js';

/**
 * A small evaluator of Kubernetes NetworkPolicy semantics (networking.k8s.io/v1), so tests can
 * ask "may this pod open a connection to that pod/address on this port?" of rendered manifests
 * instead of pattern-matching YAML. Where CNIs differ it takes the more permissive reading:
 * an ipBlock also matches pod IPs (Calico, Cilium do), so a cluster range left out of `except`
 * shows up as allowed.
 */

export interface PodEndpoint {
  kind: 'pod';
  namespace: string;
  labels: Record<string, string>;
  ip: string;
}
export interface AddressEndpoint {
  kind: 'address';
  ip: string;
}
export type Endpoint = PodEndpoint | AddressEndpoint;
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PortRule {
  port?: number | string;
  endPort?: number;
  protocol?: Protocol;
}
interface Rule {
  to?: Peer[];
  from?: Peer[];
  ports?: PortRule[];
}
interface PolicySpec {
  podSelector: Selector;
  policyTypes?: ('Ingress' | 'Egress')[];
  ingress?: Rule[];
  egress?: Rule[];
}

export function selectorMatches(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In':
        return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn':
        return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
    }
  });
  return byLabels && byExpressions;
}

export function inCidr(ip: string, cidr: string): boolean {
  const [network, bits] = cidr.split('/');
  const family = isIPv6(network!) ? 'ipv6' : 'ipv4';
  if ((isIPv6(ip) ? 'ipv6' : 'ipv4') !== family) return false;
  const list = new BlockList();
  list.addSubnet(network!, Number(bits), family);
  return list.check(ip, family);
}

export class NetworkPolicies {
  private readonly policies: { namespace: string; spec: PolicySpec }[];
  private readonly namespaceLabels = new Map<string, Record<string, string>>();

  constructor(objects: K8sObject[]) {
    this.policies = objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => ({ namespace: o.metadata.namespace!, spec: o['spec'] as PolicySpec }));
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) this.namespaceLabels.set(ns.metadata.name, ns.metadata.labels ?? {});
  }

  /** Labels of a namespace as the API server sets them (`kubernetes.io/metadata.name` always). */
  labelsOfNamespace(name: string): Record<string, string> {
    return { ...this.namespaceLabels.get(name), 'kubernetes.io/metadata.name': name };
  }

  /** Whether both ends' policies let `from` open a connection to `to` on `port`. */
  allows(from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
    return this.sends(from, to, port, protocol) && this.admits(from, to, port, protocol);
  }

  /** The sender's half alone: its namespace's egress policies. */
  sends(from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
    return from.kind === 'address' || this.permits(from, 'Egress', to, port, protocol);
  }

  /** The receiver's half alone: its namespace's ingress policies. */
  admits(from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
    return to.kind === 'address' || this.permits(to, 'Ingress', from, port, protocol);
  }

  private permits(pod: PodEndpoint, direction: 'Ingress' | 'Egress', peer: Endpoint, port: number, protocol: Protocol): boolean {
    const applying = this.policies.filter(
      (p) => p.namespace === pod.namespace && selectorMatches(p.spec.podSelector, pod.labels) && this.types(p.spec).includes(direction),
    );
    if (applying.length === 0) return true;
    return applying.some((p) => {
      const rules = (direction === 'Ingress' ? p.spec.ingress : p.spec.egress) ?? [];
      return rules.some((rule) => {
        const peers = direction === 'Ingress' ? rule.from : rule.to;
        const peerOk = peers === undefined || peers.length === 0 || peers.some((candidate) => this.peerMatches(candidate, p.namespace, peer));
        return peerOk && portMatches(rule.ports, port, protocol);
      });
    });
  }

  private types(spec: PolicySpec): string[] {
    return spec.policyTypes ?? (spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);
  }

  private peerMatches(peer: Peer, policyNamespace: string, endpoint: Endpoint): boolean {
    if (peer.ipBlock) {
      const { cidr, except = [] } = peer.ipBlock;
      return inCidr(endpoint.ip, cidr) && !except.some((e) => inCidr(endpoint.ip, e));
    }
    if (endpoint.kind === 'address') return false;
    const namespaceOk = peer.namespaceSelector
      ? selectorMatches(peer.namespaceSelector, this.labelsOfNamespace(endpoint.namespace))
      : endpoint.namespace === policyNamespace;
    return namespaceOk && selectorMatches(peer.podSelector, endpoint.labels);
  }
}

function portMatches(ports: PortRule[] | undefined, port: number, protocol: Protocol): boolean {
  if (ports === undefined || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string') throw new Error(`named port ${p.port}: give NetworkPolicies port numbers so they can be checked`);
    return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
  });
}
