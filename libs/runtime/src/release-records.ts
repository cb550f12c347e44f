import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LogFifo } from './logs/log-fifos.js';

/**
 * What a runtime supervisor records of one release it runs, so that its successor can take it
 * over: identity, the process to watch, where the app listens, its cgroup and its log FIFOs.
 * Never its environment (secrets): the edge hands that again when it claims the release.
 */
export interface ReleaseRecord {
  releaseId: string;
  applicationId: string;
  /** The release's root process (the sandbox's outermost one, or the unsandboxed shell). */
  pid: number;
  /** `/proc/<pid>/stat` field 22 when it was started: a reused pid does not match. */
  startTime: number;
  /** The PORT it was given (sandboxed: also the host port pasta forwards). */
  port: number;
  /** Where it was found listening instead of PORT (sandboxed: where pasta forwards `port` to). */
  appPort?: number;
  /** The cgroup's name under the apps' parent; null: none (no cgroups here, or unsandboxed). */
  cgroup: string | null;
  sandboxed: boolean;
  /** The release's stdout and stderr FIFOs. */
  stdout: string;
  stderr: string;
}

interface StateFile {
  version: 1;
  releases: ReleaseRecord[];
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The runtime supervisor's state: `<dir>/releases.json` (0600 in a 0700 directory: root's alone)
 * and each release's log FIFOs beside it. Every change rewrites the file whole, synchronously
 * (a few hundred bytes a release), through a rename: a kill at any moment leaves the old file or
 * the new one, and nothing started is ever unrecorded past the turn that started it.
 */
export class ReleaseRecords {
  private readonly records = new Map<string, ReleaseRecord>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }

  private get file(): string {
    return join(this.dir, 'releases.json');
  }

  /** The release's stdout and stderr FIFOs. */
  fifos(releaseId: string): { stdout: LogFifo; stderr: LogFifo } {
    if (!SAFE_ID.test(releaseId)) throw new Error(`not a release id: ${JSON.stringify(releaseId.slice(0, 64))}`);
    return { stdout: new LogFifo(join(this.dir, `${releaseId}.stdout`)), stderr: new LogFifo(join(this.dir, `${releaseId}.stderr`)) };
  }

  /**
   * What the previous supervisor recorded (read once, at start); [] when nothing (or nothing
   * readable). They stay recorded until `remove`d: a supervisor killed while it takes them over
   * leaves them to the next one.
   */
  readPrevious(): ReleaseRecord[] {
    let parsed: StateFile;
    try {
      parsed = JSON.parse(readFileSync(this.file, 'utf8')) as StateFile;
    } catch {
      return [];
    }
    const releases = Array.isArray(parsed?.releases) ? parsed.releases : [];
    const valid = releases.filter(
      (r) =>
        typeof r?.releaseId === 'string' &&
        SAFE_ID.test(r.releaseId) &&
        Number.isInteger(r.pid) &&
        Number.isInteger(r.startTime) &&
        Number.isInteger(r.port) &&
        (r.appPort === undefined || Number.isInteger(r.appPort)),
    );
    for (const record of valid) this.records.set(record.releaseId, record);
    return valid;
  }

  put(record: ReleaseRecord): void {
    this.records.set(record.releaseId, record);
    this.write();
  }

  remove(releaseId: string): void {
    if (this.records.delete(releaseId)) this.write();
  }

  private write(): void {
    const state: StateFile = { version: 1, releases: [...this.records.values()] };
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(state, null, 1)}\n`, { mode: 0o600 });
    renameSync(temporary, this.file);
  }
}
