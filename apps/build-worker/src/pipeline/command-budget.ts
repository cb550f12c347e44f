/**
 * The time every command of one deploy may take together (`BUILD_TOTAL_TIMEOUT_MS`): install,
 * build and prune draw from it, so a project cannot stretch a deploy to several times the
 * per-command limit by having several commands.
 */
export class CommandBudget {
  private spentMs = 0;

  constructor(readonly totalMs: number) {}

  get remainingMs(): number {
    return Math.max(0, this.totalMs - this.spentMs);
  }

  spend(ms: number): void {
    this.spentMs += Math.max(0, ms);
  }
}
