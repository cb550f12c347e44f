/**
 * Turns a probe's findings into violations: one line each, with the concrete evidence (the uid,
 * the path read, what the port answered). A failing test prints them and the findings themselves.
 */
import type { Reach, TcpTarget } from './targets.js';

/* The findings are JSON written by plain-Node probes inside the tenant: untyped by nature. */
type Findings = any;

/** Fails with every violation and the evidence behind them; passes only when there are none. */
export function expectNone(title: string, violations: string[], evidence: unknown): void {
  if (violations.length) {
    const json = JSON.stringify(evidence, null, 1);
    throw new Error(`${title}:\n- ${violations.join('\n- ')}\n\nevidence (${json.length} chars):\n${json.slice(0, 12_000)}`);
  }
  expect(violations).toEqual([]);
}

/** A probe that crashed is a violation too: nothing proven is nothing proven. */
function crashed(where: string, part: string, value: Findings): string[] {
  if (value === undefined || value === null) return [`${where}: no ${part} findings at all`];
  return value.crashed ? [`${where}: the ${part} probe crashed: ${value.crashed}`] : [];
}

export interface Forbidden {
  /** uid → who holds it (root, the platform, the build user, the neighbour). */
  uids: Map<number, string>;
}

export function identityViolations(where: string, identity: Findings, forbidden: Forbidden): string[] {
  const out = crashed(where, 'identity', identity);
  if (out.length) return out;
  for (const [uid, who] of forbidden.uids) if (identity.uid === uid) out.push(`${where}: runs as uid ${uid} (${who}); Uid line "${identity.Uid}"`);
  if (identity.gid === 0) out.push(`${where}: runs with gid 0`);
  if (identity.NoNewPrivs !== '1') out.push(`${where}: NoNewPrivs is ${identity.NoNewPrivs}`);
  if (!/^0+$/.test(identity.CapEff ?? '')) out.push(`${where}: effective capabilities ${identity.CapEff}`);
  if (!/^0+$/.test(identity.CapPrm ?? '')) out.push(`${where}: permitted capabilities ${identity.CapPrm}`);
  return out;
}

/** Command lines that are never a tenant's own: the platform's services and stores, the neighbour, the test. */
export const FOREIGN_PROCESSES = /dist\/main\.js|launcher|postgres|redis-server|neighbour\.mjs|jest|nx\.js|pnpm/;

export function processViolations(where: string, processes: Findings): string[] {
  const out = crashed(where, 'processes', processes);
  if (out.length) return out;
  for (const p of processes.visible ?? []) {
    if (FOREIGN_PROCESSES.test(p.cmdline ?? '')) out.push(`${where}: sees pid ${p.pid} (uid ${p.uid}): ${p.cmdline}`);
    if (p.cmdlineNeedles?.length) out.push(`${where}: /proc/${p.pid}/cmdline holds ${p.cmdlineNeedles.join(', ')}`);
    if (p.environ?.needles?.length) out.push(`${where}: read /proc/${p.pid}/environ (${p.cmdline}) holding ${p.environ.needles.join(', ')}`);
    else if (p.environ?.readable && FOREIGN_PROCESSES.test(p.cmdline ?? ''))
      out.push(`${where}: read /proc/${p.pid}/environ of ${p.cmdline} (${p.environ.bytes} bytes)`);
  }
  for (const n of processes.neighbour ?? []) {
    if (n.readable)
      out.push(`${where}: read the neighbour's /proc/${n.pid}/environ (${n.bytes} bytes${n.needles?.length ? `, holding ${n.needles.join(', ')}` : ''})`);
  }
  return out;
}

export function fileViolations(where: string, files: Findings): string[] {
  const out = [...crashed(where, 'known paths', files?.known), ...crashed(where, 'walk', files?.walk)];
  for (const r of files?.known?.results ?? []) {
    if (r.outcome === 'listed') out.push(`${where}: listed ${r.path} (${r.entries} entries: ${r.sample.join(', ')})`);
    if (r.outcome === 'read') out.push(`${where}: read ${r.path} (${r.bytes} bytes${r.needles?.length ? `, holding ${r.needles.join(', ')}` : ''})`);
  }
  for (const hit of files?.walk?.hits ?? []) out.push(`${where}: found ${hit.needles.join(', ')} in ${hit.path}`);
  return out;
}

function expectation(target: TcpTarget | undefined, context: 'app' | 'build'): Reach | undefined {
  return target?.[context];
}

/** Connections that opened where they must not, and any Postgres that let `postgres` in without a password. */
export function networkViolations(where: string, network: Findings, tcp: TcpTarget[], context: 'app' | 'build'): string[] {
  const out = crashed(where, 'network', network);
  if (out.length) return out;
  const byName = new Map(tcp.map((t) => [t.name, t]));
  for (const r of network.results ?? []) {
    const reach = expectation(byName.get(r.name), context);
    if (r.connected && reach === 'blocked') out.push(`${where}: connected to ${r.name} ${r.host}:${r.port} → ${r.reply}`);
    if (r.connected && /trust/.test(r.reply ?? '')) out.push(`${where}: ${r.name} ${r.host}:${r.port} let "postgres" in without a password`);
  }
  if ((network.results ?? []).length < tcp.length) out.push(`${where}: only ${(network.results ?? []).length} of ${tcp.length} targets were tried`);
  return out;
}

/** What must stay reachable: the outside world (registries), and for the app its own database server. */
export function unreachable(where: string, network: Findings, tcp: TcpTarget[], context: 'app' | 'build'): string[] {
  const out = crashed(where, 'network', network);
  if (out.length) return out;
  const byName = new Map(tcp.map((t) => [t.name, t]));
  return (network.results ?? [])
    .filter((r: Findings) => expectation(byName.get(r.name), context) === 'allowed' && !r.connected)
    .map((r: Findings) => `${where}: could not reach ${r.name} ${r.host}:${r.port} (${r.error})`);
}
