/**
 * What a release's own processes were found listening on, against the PORT they were given:
 * on PORT; on exactly one other port (the platform routes there); on several, none of them PORT;
 * on nothing.
 */
export type PortFinding = { kind: 'env' } | { kind: 'own'; port: number } | { kind: 'several'; ports: number[] } | { kind: 'none' };

export function portFinding(ports: number[], envPort: number): PortFinding {
  if (ports.includes(envPort)) return { kind: 'env' };
  if (ports.length === 1) return { kind: 'own', port: ports[0]! };
  return ports.length === 0 ? { kind: 'none' } : { kind: 'several', ports };
}

/**
 * How long the one port other than PORT must stay the only one before it is routed to: an app
 * that opens a side port first and PORT a moment later is not caught in between.
 */
export const SETTLE_MS = 1000;

/**
 * Decides, scan after scan of a starting release's listening ports, where its traffic must go:
 * PORT as soon as it listens there; else its single other port, once that has stayed the only one
 * for SETTLE_MS.
 */
export class PortSearch {
  private candidate?: { port: number; since: number };
  /** The latest scan's finding (undefined: no scan yet). */
  last?: PortFinding;

  constructor(readonly envPort: number) {}

  /** After a scan at `now`: the port to route to (PORT or the app's own), undefined to keep waiting. */
  next(ports: number[], now: number): number | undefined {
    const finding = (this.last = portFinding(ports, this.envPort));
    if (finding.kind === 'env') return this.envPort;
    if (finding.kind !== 'own') {
      this.candidate = undefined;
      return undefined;
    }
    if (this.candidate?.port !== finding.port) this.candidate = { port: finding.port, since: now };
    return now - this.candidate.since >= SETTLE_MS ? finding.port : undefined;
  }
}

/** Node's words for a port another socket holds: `listen EADDRINUSE: address already in use :::3000`. */
const ADDRESS_IN_USE = /EADDRINUSE: address already in use \S*:(\d{1,5})\b/;

/** The port a Node app's output says it could not listen on because it was taken, if any. */
export function portInUse(output: string): number | undefined {
  const port = Number(ADDRESS_IN_USE.exec(output)?.[1]);
  return port > 0 && port < 65536 ? port : undefined;
}

/**
 * Why a release that never answered HTTP is unhealthy, naming what was tried (its PORT, the port it
 * was routed to) and what it was found listening on (`where`: "in its sandbox", "among its processes").
 */
export function unansweredMessage(envPort: number, routedTo: number | undefined, finding: PortFinding | undefined, seconds: number, where: string): string {
  const within = `within ${seconds} s`;
  if (routedTo !== undefined && routedTo !== envPort)
    return `the release listens on ${routedTo}, not on PORT (${envPort}), and did not answer HTTP there ${within}`;
  switch (finding?.kind) {
    case 'several':
      return `the release did not answer HTTP on PORT ${envPort} ${within}: it listens on ${finding.ports.join(', ')}, none of them PORT, and the platform routes to a port other than PORT only when it is the only one`;
    case 'none':
      return `the release did not answer HTTP ${within}: it was given PORT=${envPort}, and no listening TCP port was found ${where}`;
    case 'own':
      return `the release did not answer HTTP on PORT ${envPort} ${within}: it had only just started listening on ${finding.port} instead`;
    case 'env':
    case undefined:
      return `the release did not answer HTTP on PORT ${envPort} ${within}`;
  }
}
