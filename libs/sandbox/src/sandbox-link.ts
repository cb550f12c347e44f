import { execFile } from 'node:child_process';
import { readFile, readlink } from 'node:fs/promises';
import { descendants } from './process-tree.js';
import { SETUP_ENV, tool } from './sandbox-argv.js';

/**
 * The kernel path from the edge to a sandboxed app (issue 34). pasta forwards the host's
 * `127.0.0.1:PORT` into the app's network namespace by copying every byte through a user-mode
 * process; here a veth pair joins the host to that namespace instead, and packets move in the
 * kernel, as Docker's bridge and Kubernetes' pod networks move them:
 *
 *   nginx ──► A:PORT  (host route A/32 dev slw<PORT>)  ══ veth ══►  slw0 in the app's namespace
 *             DNAT to 127.0.0.1:<app port>, SNAT to 127.0.0.1 ──► the app (wherever it listens)
 *
 * A is `base + PORT` in RUNTIME_NETWORK_SUBNET (a /16: one address per port, so the edge knows an
 * app's address from its slot port alone, and a slot swap stays a marker file, not a reload). The
 * host side of every pair is `base + 1`. The app sees its proxy at 127.0.0.1, as it did behind
 * pasta, and may listen on 127.0.0.1, 0.0.0.0 or `::`.
 *
 * What does NOT change: the app's egress and the platform ports it may reach stay pasta's (the
 * namespace is still pasta's, with `-T` and `--no-map-gw`), and pasta still holds the host's
 * `127.0.0.1:PORT`, which keeps the port taken while the release runs. What the veth adds is
 * closed by nftables:
 * - host `inet slipway_sandboxes`: from a `slw*` link only replies enter the host (the app cannot
 *   open a connection to the host through it); the links' host address takes no connection from
 *   anywhere else either (every service listening on 0.0.0.0 would answer there, and pasta's
 *   egress — any app's, any build's — dials host addresses); nothing is forwarded to or from one (no sandbox
 *   reaches another through the host), and only root and the proxy's workers (`clients`) may open
 *   a connection to a sandbox address — not pasta, whose sockets are the app's user's: an app
 *   dialing a neighbour's address through its egress is refused.
 *   Stateless (no `ct`): which side opens a TCP connection is its first packet's SYN without ACK,
 *   so the rules need no connection tracking, and the host's traffic — every request nginx takes,
 *   the platform's Postgres and Redis — is never tracked because sandboxes exist (one `ct` rule
 *   turns conntrack on for every packet of the host's namespace; apps/edge/README.md "The network
 *   path" has the figures).
 * - in the namespace `ip slipway`: from `slw0`, only the DNAT to the app's port is accepted.
 */

/** One address per port: the subnet must be an IPv4 /16. */
export interface SandboxSubnet {
  cidr: string;
  /** The subnet's first address, as an unsigned 32-bit number. */
  base: number;
}

export const DEFAULT_SANDBOX_SUBNET = '10.213.0.0/16';

/** The host side of every link is named `slw<port>`; the app's side is `slw0`. */
export const LINK_PREFIX = 'slw';
const INNER = 'slw0';
const HOST_TABLE = 'slipway_sandboxes';
/** The host table's shape: a table without it (an older platform's) is replaced. */
const HOST_TABLE_SHAPE = 'slipway sandboxes v2: stateless';

export function parseSandboxSubnet(cidr: string): SandboxSubnet {
  const match = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.exec(cidr.trim());
  const [a, b] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!match || a > 255 || b > 255 || a === 127 || a === 0)
    throw new Error(`the sandbox subnet must be an IPv4 /16 such as ${DEFAULT_SANDBOX_SUBNET} (one address per port), not ${JSON.stringify(cidr)}`);
  return { cidr: `${a}.${b}.0.0/16`, base: ((a << 24) | (b << 16)) >>> 0 };
}

function dotted(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 2 || port > 65_535) throw new Error(`no sandbox address for port ${port}`);
  return port;
}

/** Where the edge reaches the sandboxed app whose PORT is `port`. */
export function sandboxAddress(subnet: SandboxSubnet, port: number): string {
  return dotted(subnet.base + checkPort(port));
}

/** The host's address on every link (the source the app's proxy connects from, before the SNAT). */
export function gatewayAddress(subnet: SandboxSubnet): string {
  return dotted(subnet.base + 1);
}

export function hostLinkName(port: number): string {
  return `${LINK_PREFIX}${checkPort(port)}`;
}

/**
 * The host's table (see the module comment), one per host and shared by every platform on it:
 * made when missing (or when it is of an older shape), never rewritten otherwise, so one
 * platform's start never drops another's grants. What each platform brings — its proxy's uids,
 * its subnet's host address — goes into the table's sets (`hostElements`).
 */
export function hostTable(replace: boolean): string {
  const links = `"${LINK_PREFIX}*"`;
  // `create` fails when another process made the table meanwhile: the whole batch is then void.
  const start = replace ? `table inet ${HOST_TABLE} {}\ndelete table inet ${HOST_TABLE}` : `create table inet ${HOST_TABLE}`;
  return `${start}
table inet ${HOST_TABLE} {
  comment "${HOST_TABLE_SHAPE}"
  set clients {
    type uid
    elements = { 0 }
  }
  set gateways {
    type ipv4_addr
  }
  chain input {
    type filter hook input priority filter - 10; policy accept;
    iifname ${links} jump from_link
    ip daddr @gateways meta l4proto tcp reject with tcp reset
    ip daddr @gateways reject with icmpx type admin-prohibited
  }
  # From an app: TCP to the link's host address that opens nothing (a SYN without ACK is a new
  # connection: refused at once), nothing else.
  chain from_link {
    meta nfproto != ipv4 drop
    ip daddr != @gateways drop
    tcp flags & (syn | ack) == syn reject with tcp reset
    meta l4proto tcp accept
    reject with icmpx type admin-prohibited
  }
  chain forward {
    type filter hook forward priority filter - 10; policy accept;
    iifname ${links} drop
    oifname ${links} drop
  }
  chain output {
    type filter hook output priority filter - 10; policy accept;
    oifname ${links} jump to_link
  }
  # To an app: a connection is opened (SYN without ACK) by root or the proxy's workers only; the
  # rest of TCP (the connection's own packets, a reset) goes.
  chain to_link {
    tcp flags & (syn | ack) != syn accept
    meta skuid @clients accept
    meta l4proto tcp reject with tcp reset
    reject with icmpx type admin-prohibited
  }
}
`;
}

/** One platform's grants in the host's table: who may connect to its apps, and its links' host address. */
export function hostElements(subnet: SandboxSubnet, clientUids: number[]): string {
  const uids = [...new Set([0, ...clientUids.filter((uid) => Number.isInteger(uid) && uid >= 0)])].sort((x, y) => x - y).join(', ');
  return `add element inet ${HOST_TABLE} clients { ${uids} }
add element inet ${HOST_TABLE} gateways { ${gatewayAddress(subnet)} }
`;
}

/** The namespace's rules: `port` on its link leads to `appPort` on its loopback, nothing else enters there. */
export function namespaceRules(address: string, port: number, appPort: number): string {
  return `table ip slipway {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "${INNER}" ip daddr ${address} tcp dport ${checkPort(port)} dnat to 127.0.0.1:${checkPort(appPort)}
  }
  chain input_nat {
    type nat hook input priority 100; policy accept;
    iifname "${INNER}" ip daddr 127.0.0.1 snat to 127.0.0.1
  }
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "${INNER}" ct status dnat accept
    iifname "${INNER}" drop
  }
}
`;
}

function run(file: string, args: string[], input?: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { env: { ...SETUP_ENV }, timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error)
        reject(
          new Error(
            `${file.split('/').pop()} ${args.slice(0, 3).join(' ')}: ${(stderr || error.message).trim().split('\n').slice(-2).join(' ').slice(0, 300)}`,
          ),
        );
      else resolve(stdout);
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}

/** Numbers and fixed names only: the shell scripts below interpolate nothing else. */
function script(lines: string[]): string {
  return `set -e\n${lines.join('\n')}\n`;
}

export interface SandboxLinksOptions {
  subnet: SandboxSubnet;
  /** Uids besides root that may open connections to sandboxed apps: the proxy's workers (nginx's user). */
  clientUids: () => Promise<number[]>;
  /**
   * How often the host's table is looked at once a link exists (default GUARD_MS): a table gone
   * (`nft flush ruleset`, a firewall reload) is made again within this, not at the next link only.
   */
  guardMs?: number;
  /** One line for the operator when the table had to be made again. */
  onNotice?: (line: string) => void;
}

const GUARD_MS = 10_000;

/** Makes and removes the links (as root); see the module comment. */
export class SandboxLinks {
  private guard?: NodeJS.Timeout;

  constructor(private readonly options: SandboxLinksOptions) {}

  /** Looks at the host's table every `guardMs` from the first link on (unref'd: it keeps no process alive). */
  private startGuard(): void {
    if (this.guard) return;
    this.guard = setInterval(() => {
      this.ensureHostRules()
        .then((made) => made && this.options.onNotice?.(`sandbox network: the host's nftables table ${HOST_TABLE} was gone (a flushed ruleset?); made again`))
        .catch((error: Error) => this.options.onNotice?.(`sandbox network: the host's nftables table ${HOST_TABLE} could not be checked: ${error.message}`));
    }, this.options.guardMs ?? GUARD_MS);
    this.guard.unref();
  }

  /** Stops looking at the host's table (links stay as they are). */
  close(): void {
    clearInterval(this.guard);
    this.guard = undefined;
  }

  get subnet(): SandboxSubnet {
    return this.options.subnet;
  }

  /**
   * Whether links can be made here: root, `ip` and `nft`, veth pairs, nftables with NAT. Resolves
   * with null, or the reason the kernel path cannot be made (the caller falls back to pasta).
   */
  async probe(): Promise<string | null> {
    if (process.getuid?.() !== 0) return 'the edge does not run as root (veth pairs and nftables need it)';
    for (const name of ['ip', 'nft', 'nsenter'] as const) {
      const file = tool(name);
      if (!file.startsWith('/'))
        return `${name} is not installed: run \`apt-get install -y ${name === 'nft' ? 'nftables' : name === 'ip' ? 'iproute2' : 'util-linux'}\``;
    }
    const probe = `${LINK_PREFIX}probe${process.pid % 1000}`;
    try {
      await this.ensureHostRules();
      await run(tool('ip'), ['link', 'add', probe, 'type', 'veth', 'peer', 'name', `${probe}p`]);
      await run(tool('ip'), ['link', 'del', probe]);
      await run(tool('nft'), ['-c', '-f', '-'], namespaceRules('10.0.0.2', 2, 2));
      return null;
    } catch (error) {
      await run(tool('ip'), ['link', 'del', probe]).catch(() => undefined);
      return (error as Error).message;
    }
  }

  /**
   * The host's table (made when missing, or of an older shape) with this platform's grants in it:
   * at every link and every `guardMs`. Resolves true when the table had to be made.
   */
  async ensureHostRules(): Promise<boolean> {
    const current = await run(tool('nft'), ['list', 'table', 'inet', HOST_TABLE]).catch(() => undefined);
    const elements = hostElements(this.subnet, await this.options.clientUids());
    if (current?.includes(HOST_TABLE_SHAPE)) {
      await run(tool('nft'), ['-f', '-'], elements);
      return false;
    }
    // Made here, or by another platform's process a moment before (then only the grants are added).
    return run(tool('nft'), ['-f', '-'], hostTable(current !== undefined) + elements).then(
      () => true,
      async (error: Error) => {
        if (!(await run(tool('nft'), ['list', 'table', 'inet', HOST_TABLE]).catch(() => '')).includes(HOST_TABLE_SHAPE)) throw error;
        await run(tool('nft'), ['-f', '-'], elements);
        return false;
      },
    );
  }

  /**
   * Joins the network namespace of the sandbox started as `rootPid` (pasta's, found among its
   * descendants) to the host: `port` at its address leads to `appPort` on its loopback. A link of
   * the same name left from an earlier start on the port is replaced; `keep`: an existing link is
   * kept as it is (a release taken over from a previous supervisor).
   */
  async attach(rootPid: number, port: number, appPort: number, keep = false, timeoutMs = 5000): Promise<void> {
    const name = hostLinkName(port);
    await this.ensureHostRules();
    this.startGuard();
    if (keep && (await this.exists(port))) return;
    const deadline = Date.now() + timeoutMs;
    // pasta's short-lived helpers live in the namespace too: one found just before it exits is
    // gone when `ip` looks it up, so a vanished pid means looking again, not failing.
    for (let attempt = 1; ; attempt++) {
      const inside = await sandboxNamespacePid(rootPid, Math.max(0, deadline - Date.now()));
      try {
        return await this.join(inside, name, port, appPort);
      } catch (error) {
        if (attempt >= 5 || (await alive(inside)) || Date.now() > deadline) throw error;
      }
    }
  }

  private async join(inside: number, name: string, port: number, appPort: number): Promise<void> {
    const address = sandboxAddress(this.subnet, port);
    const gateway = gatewayAddress(this.subnet);
    const ip = tool('ip');
    const sysctl = tool('sysctl');
    await run('/bin/sh', [
      '-c',
      script([
        `${ip} link del ${name} 2>/dev/null || true`,
        `${ip} link add ${name} type veth peer name ${INNER} netns ${inside}`,
        `${sysctl} -qw net.ipv6.conf.${name}.disable_ipv6=1`,
        `${ip} addr add ${gateway}/32 dev ${name}`,
        `${ip} link set ${name} up`,
        `${ip} route replace ${address}/32 dev ${name} src ${gateway}`,
      ]),
    ]);
    await run(tool('nsenter'), [
      `--net=/proc/${inside}/ns/net`,
      '--',
      '/bin/sh',
      '-c',
      script([
        `${sysctl} -qw net.ipv6.conf.${INNER}.disable_ipv6=1 net.ipv4.conf.${INNER}.route_localnet=1`,
        `${ip} addr add ${address}/32 dev ${INNER}`,
        `${ip} link set ${INNER} up`,
        `${ip} route add ${gateway}/32 dev ${INNER}`,
        `${tool('nft')} -f - <<'RULES'`,
        namespaceRules(address, port, appPort).trimEnd(),
        'RULES',
      ]),
    ]);
  }

  /** Removes the host side of the link (the pair goes with it; a namespace that ended took it already). */
  async detach(port: number): Promise<void> {
    await run(tool('ip'), ['link', 'del', hostLinkName(port)]).catch(() => undefined);
  }

  async exists(port: number): Promise<boolean> {
    return readFile(`/sys/class/net/${hostLinkName(port)}/operstate`, 'utf8').then(
      () => true,
      () => false,
    );
  }
}

function alive(pid: number): Promise<boolean> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then(
    () => true,
    () => false,
  );
}

/** A process of the sandbox started as `rootPid` that is in a network namespace other than this process's. */
async function sandboxNamespacePid(rootPid: number, timeoutMs: number): Promise<number> {
  const own = await readlink('/proc/self/ns/net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const pid of [rootPid, ...(await descendants(rootPid))]) {
      const ns = await readlink(`/proc/${pid}/ns/net`).catch(() => null);
      if (ns && ns !== own) return pid;
    }
    if (!(await alive(rootPid))) throw new Error(`the sandbox (pid ${rootPid}) ended before its network namespace could be joined to the host`);
    if (Date.now() > deadline) throw new Error(`no network namespace of the sandbox (pid ${rootPid}) within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
