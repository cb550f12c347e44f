import { BuildLimits, DEFAULT_BUILD_LIMITS, type BuildLimitSettings } from './build-limits.js';
import { Sandbox } from './sandbox.js';
import { detectSandbox } from './sandbox-detect.js';

export interface SandboxSettings {
  /** BUILD_SANDBOX: `on` (default; `auto` is accepted as its old name) or `off`. */
  setting: 'on' | 'off';
  buildUser: string;
  workspacesDir: string;
  /** Where pasta and bwrap are found. */
  path: string;
  /** How long a working sandbox is trusted before it is probed again. */
  recheckMs?: number;
  /** The cgroup (or, by the operator's choice, rlimit) limits every command runs under (default: the contract's, in cgroups). */
  limits?: BuildLimitSettings;
}

export const OFF_REASON = 'sandboxing is turned off (BUILD_SANDBOX=off)';

/**
 * Hands out the sandbox builds run in, failing closed. With `on`, a sandbox that cannot be made
 * throws SandboxUnavailableError and nothing runs; that answer is never remembered, so the next
 * deploy probes again and an operator's fix (installing bubblewrap/passt, `chmod 0666
 * /dev/net/tun`, the sysctl) works without restarting the worker. A working sandbox is trusted
 * for `recheckMs` (a probe costs a pasta start-up, ~0.25 s) and probed again after a command fails.
 */
export class SandboxProvider {
  private working?: { sandbox: Sandbox; until: number };
  private pending?: Promise<Sandbox>;
  /** Build limits, once they could be set up (a failure is never remembered either). */
  private limits?: BuildLimits;

  constructor(private readonly settings: SandboxSettings) {}

  /** Set when builds run unsandboxed by the operator's choice (every deploy carries the hazard). */
  get unsandboxedReason(): string | null {
    return this.settings.setting === 'off' ? OFF_REASON : null;
  }

  /** Set when builds run under rlimits only, by the operator's choice (every deploy carries the hazard). */
  get rlimitOnlyReason(): string | null {
    return this.settings.limits?.mode === 'rlimit' ? 'BUILD_LIMITS=rlimit' : null;
  }

  acquire(): Promise<Sandbox> {
    if (this.working && this.working.until > Date.now()) return Promise.resolve(this.working.sandbox);
    this.pending ??= this.make()
      .then((sandbox) => {
        this.working = { sandbox, until: Date.now() + (this.settings.recheckMs ?? 60_000) };
        return sandbox;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  private async make(): Promise<Sandbox> {
    // Limits first: without them nothing runs, sandboxed or not.
    this.limits ??= await BuildLimits.open(this.settings.limits ?? DEFAULT_BUILD_LIMITS);
    if (this.settings.setting === 'off') return new Sandbox({ kind: 'none', reason: OFF_REASON }, this.limits, this.settings.path);
    const mode = await detectSandbox(this.settings.buildUser, this.settings.workspacesDir, this.settings.path);
    return new Sandbox(mode, this.limits, this.settings.path);
  }

  /** The next acquire() probes again (after a sandboxed command failed). */
  forget(): void {
    this.working = undefined;
  }
}
