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

  constructor(private readonly settings: SandboxSettings) {}

  /** Set when builds run unsandboxed by the operator's choice (every deploy carries the hazard). */
  get unsandboxedReason(): string | null {
    return this.settings.setting === 'off' ? OFF_REASON : null;
  }

  acquire(): Promise<Sandbox> {
    if (this.settings.setting === 'off') return Promise.resolve(new Sandbox({ kind: 'none', reason: OFF_REASON }));
    if (this.working && this.working.until > Date.now()) return Promise.resolve(this.working.sandbox);
    this.pending ??= detectSandbox(this.settings.buildUser, this.settings.workspacesDir, this.settings.path)
      .then((mode) => {
        const sandbox = new Sandbox(mode, this.settings.path);
        this.working = { sandbox, until: Date.now() + (this.settings.recheckMs ?? 60_000) };
        return sandbox;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** The next acquire() probes again (after a sandboxed command failed). */
  forget(): void {
    this.working = undefined;
  }
}
