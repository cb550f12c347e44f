import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { BlobStore } from '@slipway/blob';
import { SandboxUnavailableError, isSameProcess, type LocalSandbox } from '@slipway/sandbox';
import type { NodeToolchain, NodeToolchains } from '@slipway/toolchains';
import { UnhealthyReleaseError, type ReleaseToRun, type RunningRelease, type RuntimeDriver } from './driver.js';
import { LocalRelease, type AdoptedRelease, type Confinement, type Supervision } from './local-release.js';
import { LogBudget } from './logs/log-budget.js';
import { DEFAULT_LOG_LIMITS, type LogLimits } from './logs/log-limits.js';
import { LogRing, readLogRing } from './logs/log-ring.js';
import { ReleaseLog } from './logs/release-log.js';
import { extractRelease } from './release-extractor.js';
import { ReleaseRecords, type ReleaseRecord } from './release-records.js';

export type { AdoptedRelease } from './local-release.js';

export interface LocalDriverOptions {
  blobs: BlobStore;
  /** Releases are extracted under `<dir>/releases/<id>`, logs written to `<dir>/logs/<id>.log` (+ `.1`, `.2`… rotated). */
  dir: string;
  /** Each release's log ring and each application's log rate (default `DEFAULT_LOG_LIMITS`). */
  logLimits?: LogLimits;
  healthTimeoutMs: number;
  /**
   * The runtime sandbox (each app as its own user, in its own namespaces, network and cgroup).
   * Without one, apps run unsandboxed — an operator's explicit choice (RUNTIME_SANDBOX=off).
   */
  sandbox?: LocalSandbox;
  /**
   * Where a release's Node.js comes from (the cache the build worker filled); without it, only
   * releases built on the platform's own Node can start.
   */
  toolchains?: NodeToolchains;
  /** Unsandboxed only: run apps as this user when the edge runs as root. */
  user?: { uid: number; gid: number };
  /** Crash restarts: first delay, doubled each time up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A runtime supervisor's directory of its own (made 0700): with it, apps outlive this process —
   * no parent-death signal, their output through named FIFOs there — and what runs is recorded
   * there (`releases.json`, no secrets) so that the next supervisor's `adopt()` takes it over.
   * Without it (an edge running its apps itself), apps die with this process.
   */
  records?: string;
}

/** `wanted` when it is free, else any free loopback port. */
function freePort(wanted = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', (error) => (wanted ? freePort().then(resolve, reject) : reject(error)));
    server.listen(wanted, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A TCP port number, else undefined. */
function validPort(port: number | undefined): number | undefined {
  return Number.isInteger(port) && port! > 0 && port! < 65536 ? port : undefined;
}

/** What `adopt()` found of the previous supervisor's releases. */
export interface Adoption {
  /** Still running: watched and logged again, waiting for the edge's claim. */
  adopted: AdoptedRelease[];
  /** Recorded but no longer running: their cgroups and FIFOs are gone now. */
  cleaned: string[];
  /** Could not be taken over (why): killed (their process group) rather than left unsupervised. */
  failed: { releaseId: string; reason: string }[];
}

/** The `local` runtime driver: releases run as child processes of the edge host. */
export class LocalDriver implements RuntimeDriver {
  readonly name = 'local' as const;

  /** Each application's log budget, shared by its running releases. */
  private readonly budgets = new Map<string, LogBudget>();
  private readonly logLimits: LogLimits;
  private readonly records?: ReleaseRecords;

  constructor(private readonly options: LocalDriverOptions) {
    this.logLimits = options.logLimits ?? DEFAULT_LOG_LIMITS;
    if (options.records) this.records = new ReleaseRecords(options.records);
  }

  releaseDir(releaseId: string): string {
    return join(this.options.dir, 'releases', releaseId);
  }

  /** The release's Node.js (verified, from the machine's cache, fetched if missing); null: the platform's. */
  private async toolchainOf(release: ReleaseToRun): Promise<NodeToolchain | null> {
    const version = release.nodeVersion;
    const platform = process.version.replace(/^v/, '');
    if (!version || version === platform) return null;
    if (!this.options.toolchains)
      throw new Error(`release ${release.releaseId} needs Node.js ${version}, and this runtime has no toolchains configured (only ${platform})`);
    return this.options.toolchains.ensure(version);
  }

  logFile(releaseId: string): string {
    return join(this.options.dir, 'logs', `${releaseId}.log`);
  }

  /** The release's log across its ring, oldest first (`lastBytes`: only its end); undefined: none. */
  readLog(releaseId: string, lastBytes?: number): Promise<string | undefined> {
    return readLogRing(this.logFile(releaseId), this.logLimits.files, lastBytes);
  }

  private async openLog(release: Pick<ReleaseToRun, 'releaseId' | 'applicationId'>): Promise<ReleaseLog> {
    const { maxBytes, files, rateBytes, burstBytes, readRateBytes } = this.logLimits;
    await mkdir(join(this.options.dir, 'logs'), { recursive: true, mode: 0o700 });
    const ring = await LogRing.open(this.logFile(release.releaseId), { maxBytes, files });
    let budget = this.budgets.get(release.applicationId);
    if (!budget) {
      budget = new LogBudget({ rateBytes, burstBytes, readRateBytes });
      this.budgets.set(release.applicationId, budget);
    }
    const applicationId = release.applicationId;
    const owner = budget;
    return new ReleaseLog(ring, budget, () => {
      // The application's last release gone: its budget goes too.
      if (owner.size > 0 || this.budgets.get(applicationId) !== owner) return;
      owner.dispose();
      this.budgets.delete(applicationId);
    });
  }

  /** The release's FIFOs (made if missing) and the records, when this is a runtime supervisor's driver. */
  private async supervision(releaseId: string): Promise<Supervision | null> {
    if (!this.records) return null;
    const fifos = this.records.fifos(releaseId);
    await Promise.all([fifos.stdout.ensure(), fifos.stderr.ensure()]);
    return { records: this.records, fifos };
  }

  private release(
    releaseId: string,
    applicationId: string,
    ports: { env: number; app: number | undefined },
    spec: ReleaseToRun | undefined,
    log: ReleaseLog,
    confinement: Confinement | null,
    toolchain: NodeToolchain | null,
    supervision: Supervision | null,
  ): LocalRelease {
    return new LocalRelease(
      releaseId,
      applicationId,
      ports.env,
      ports.app,
      this.releaseDir(releaseId),
      spec,
      log,
      this.options,
      confinement,
      toolchain,
      supervision,
      (s) => this.toolchainOf(s),
    );
  }

  async start(release: ReleaseToRun): Promise<RunningRelease> {
    const dir = this.releaseDir(release.releaseId);
    const toolchain = await this.toolchainOf(release);
    await extractRelease(await this.options.blobs.get(release.artifactKey), dir);
    const log = await this.openLog(release);
    const sandbox = this.options.sandbox;
    const began = performance.now();
    let confinement: Confinement | null;
    let port: number;
    let supervision: Supervision | null;
    try {
      confinement = sandbox ? { sandbox, ...(await sandbox.prepare(release.applicationId, release.releaseId, dir)) } : null;
      port = await freePort(release.port);
      supervision = await this.supervision(release.releaseId);
    } catch (error) {
      await log.close();
      throw error;
    }
    // Sandboxed, where the analyzer saw it listen instead of PORT is where its sandbox starts routed
    // to; unsandboxed, only a port found among its own processes is ever proxied to.
    const running = this.release(
      release.releaseId,
      release.applicationId,
      { env: port, app: confinement ? validPort(release.fixedPort) : undefined },
      release,
      log,
      confinement,
      toolchain,
      supervision,
    );
    const spawned = performance.now();
    try {
      running.spawn();
      await running.waitHealthy();
      const ms = (t: number) => Math.round(t);
      const found = running.portFound;
      if (found) log.note(`[slipway] the app listens on ${found.port}, not on PORT (${found.envPort}): routed to ${found.port}\n`);
      log.note(
        `[slipway] healthy ${ms(performance.now() - spawned)} ms after start${confinement ? ` (sandbox as ${confinement.ids.name}, prepared in ${ms(spawned - began)} ms)` : ' (unsandboxed)'}\n`,
      );
    } catch (error) {
      await running.stop(1000);
      // A sandbox that broke since it was last probed must say so, not pass for an unhealthy app.
      const broken = confinement && error instanceof UnhealthyReleaseError ? await confinement.sandbox.recheck(confinement.ids) : null;
      if (broken) throw new SandboxUnavailableError(broken);
      throw error;
    }
    return running;
  }

  /**
   * Takes over what the previous runtime supervisor recorded (call once, before anything is
   * started): each release whose root process is still the same one (pid and start time) is
   * watched again and its log read again, until the edge claims it (`AdoptedRelease.claim`) or
   * the caller stops it; what is no longer running is cleaned up (anything left in its cgroup
   * killed, the cgroup and the FIFOs removed). Needs `records`.
   */
  async adopt(): Promise<Adoption> {
    const found: Adoption = { adopted: [], cleaned: [], failed: [] };
    if (!this.records) return found;
    for (const record of this.records.readPrevious()) {
      try {
        const confinement = await this.reattach(record);
        if (!isSameProcess(record.pid, record.startTime)) {
          await this.cleanUp(record, confinement);
          found.cleaned.push(record.releaseId);
          continue;
        }
        const log = await this.openLog(record);
        const supervision = await this.supervision(record.releaseId);
        const release = this.release(
          record.releaseId,
          record.applicationId,
          { env: record.port, app: record.appPort },
          undefined,
          log,
          confinement,
          null,
          supervision,
        );
        release.adopt(record.pid, record.startTime);
        log.note(`[slipway] taken over by a restarted runtime supervisor (pid ${process.pid}): still running as pid ${record.pid}\n`);
        found.adopted.push(release);
      } catch (error) {
        // One record this supervisor cannot take over must not keep it from starting (a crash
        // loop would stop every app): that app is killed instead of left running unsupervised.
        if (isSameProcess(record.pid, record.startTime)) killGroup(record.pid);
        this.records.remove(record.releaseId);
        found.failed.push({ releaseId: record.releaseId, reason: (error as Error).message });
      }
    }
    return found;
  }

  /** A recorded release's sandbox again (its user, its cgroup if still there). */
  private async reattach(record: ReleaseRecord): Promise<Confinement | null> {
    const sandbox = this.options.sandbox;
    if (!record.sandboxed || !sandbox) return null;
    return { sandbox, ...(await sandbox.reattach(record.applicationId, record.cgroup)) };
  }

  private async cleanUp(record: ReleaseRecord, confinement: Confinement | null): Promise<void> {
    const log = await this.openLog(record);
    log.note(`[slipway] no longer running when the runtime supervisor restarted (pid ${record.pid} gone): cleaned up\n`);
    await this.release(
      record.releaseId,
      record.applicationId,
      { env: record.port, app: record.appPort },
      undefined,
      log,
      confinement,
      null,
      await this.supervision(record.releaseId),
    ).stop(0);
    // Without a cgroup, what is left of it is its process group (the group's id stays its own while it has members).
    if (!confinement?.cgroup) killGroup(record.pid);
  }
}

/**
 * SIGKILL to a release's process group: its root was started in a session of its own, so the
 * group is the sandbox's set-up processes (pasta, bubblewrap: the app's pid namespace ends with
 * them) or the unsandboxed app's tree.
 */
function killGroup(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* none left */
  }
}
