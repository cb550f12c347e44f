import { DEPLOY_STEPS, type DeployFailureCode, type DeployStep, type DeployStepName } from '@slipway/contract';
import type { BuildLogFeed } from './build-log-feed.js';
import { plainLogText } from './plain-log-text.js';
import { Redactor, tail } from './redactor.js';

/** A failure of one step, with the deployment `error.code` it maps to. */
export class StepFailure extends Error {
  override readonly name = 'StepFailure';
  constructor(
    readonly code: DeployFailureCode,
    message: string,
    readonly log = '',
  ) {
    super(message);
  }
}

/** Thrown when this worker no longer owns the deployment (another attempt took over). */
export class LostLeaseError extends Error {
  override readonly name = 'LostLeaseError';
}

/**
 * A step's log: lines for the step log (kept, plain and redacted, when the step ends), and, where
 * the deploy is followed live, `live()` — a sink for one command's raw output as it is produced
 * (the feed cuts it into lines, makes them plain and redacts them before they leave the worker).
 */
export type StepLog = ((line: string) => void) & { live?: () => (chunk: Buffer | string) => void };

/**
 * Holds the deployment's step list and persists every change through `save`, which must be
 * fenced (it resolves false once another attempt owns the deployment).
 */
export class StepRecorder {
  readonly steps: DeployStep[];
  private redactor: Redactor = new Redactor([]);

  constructor(
    private readonly save: (steps: DeployStep[]) => Promise<boolean>,
    /** Where a running command's output goes as it is produced (whoever follows the deploy); none: only the step log at the end. */
    private readonly feed?: BuildLogFeed,
  ) {
    this.steps = DEPLOY_STEPS.map((name) => ({ name, status: 'pending', startedAt: null, finishedAt: null, durationMs: null, log: '' }));
  }

  useRedactor(redactor: Redactor): void {
    this.redactor = redactor;
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  /**
   * Text from a build as the deployment keeps it (log, error message): made plain first (escape
   * sequences out, controls shown; see plain-log-text.ts), then redacted, so that a secret a
   * colour code split in two is whole again when the redactor looks for it.
   */
  plain(text: string): string {
    return this.redactor.redact(plainLogText(text));
  }

  private step(name: DeployStepName): DeployStep {
    return this.steps.find((s) => s.name === name)!;
  }

  async persist(): Promise<void> {
    if (!(await this.save(this.steps))) throw new LostLeaseError('another attempt owns this deployment');
  }

  /** Runs one step: running → succeeded (or skipped when `fn` returns 'skipped') | failed. */
  async run(name: DeployStepName, fn: (log: StepLog) => Promise<void | 'skipped'>): Promise<void> {
    const step = this.step(name);
    const started = Date.now();
    let output = '';
    // Made plain as it comes (each command's output whole), so that keeping only the tail never cuts a sequence in two.
    const log: StepLog = Object.assign(
      (line: string) => {
        const plain = plainLogText(line);
        output = tail(output + (plain.endsWith('\n') ? plain : `${plain}\n`), 64_000);
      },
      { live: this.feed ? () => this.feed!.sink(name) : undefined },
    );
    Object.assign(step, { status: 'running', startedAt: new Date(started).toISOString(), finishedAt: null, durationMs: null, log: '' });
    await this.persist();
    try {
      const result = await fn(log).finally(() => this.feed?.flush());
      this.finish(step, started, result === 'skipped' ? 'skipped' : 'succeeded', output);
    } catch (error) {
      if (error instanceof LostLeaseError) throw error;
      const extra = error instanceof StepFailure ? error.log : '';
      const message = error instanceof Error ? error.message : String(error);
      this.finish(step, started, 'failed', `${output}${extra}${extra.endsWith('\n') || !extra ? '' : '\n'}${message}\n`);
      throw error;
    }
    await this.persist();
  }

  private finish(step: DeployStep, started: number, status: DeployStep['status'], output: string): void {
    const finished = Date.now();
    Object.assign(step, { status, finishedAt: new Date(finished).toISOString(), durationMs: finished - started, log: tail(this.plain(output)) });
  }

  /** After a failure: every step that never ran is `skipped`. */
  skipRemaining(): void {
    for (const step of this.steps) if (step.status === 'pending' || step.status === 'running') step.status = step.status === 'running' ? 'failed' : 'skipped';
  }
}
