import { visibleStrings } from '@slipway/contract';
import type { DeploymentStep, DeploymentTask, Finding } from '../api/deployment-task.js';
import { LiveLine, SPINNER, formatDuration, type Terminal } from '../output/terminal.js';

const LOG_TAIL_LINES = 30;

/**
 * Human rendering of a deployment task: each finished step once, with its duration; the
 * running step on a live line with a spinner; then warnings, hazards and the outcome.
 * Every entry point first passes the task through `visibleStrings` (contract): each text in it
 * (step names and logs, findings, the error, the URL) came from the platform or a build, and
 * reaches the terminal with its control characters shown as `\u00xx`, never interpreted.
 */
export class TaskView {
  private readonly printed = new Set<string>();
  private readonly line: LiveLine;
  private frame = 0;
  private task?: DeploymentTask;

  constructor(private readonly terminal: Terminal) {
    this.line = new LiveLine(terminal);
  }

  update(received: DeploymentTask): void {
    const task = visibleStrings(received);
    this.task = task;
    const { paint } = this.terminal;
    // Once the build started: how long it waited in the queue (older gateways send no figure).
    if (task.startedAt && typeof task.queuedSeconds === 'number' && !this.printed.has('(queued)')) {
      this.printed.add('(queued)');
      this.line.print(paint.dim(`· ${'queued'.padEnd(8)} ${formatDuration(task.queuedSeconds * 1000)}`));
    }
    for (const step of task.steps) {
      if (this.printed.has(step.name) || !isSettled(step)) continue;
      this.printed.add(step.name);
      this.line.print(stepLine(step, paint));
    }
    this.tick();
  }

  /** Redraws the live line (spinner frame, elapsed time). */
  tick(): void {
    const task = this.task;
    if (!task || task.status === 'succeeded' || task.status === 'failed') return;
    const spinner = this.terminal.paint.cyan(SPINNER[this.frame++ % SPINNER.length]!);
    const running = task.steps.find((s) => s.status === 'running');
    if (running?.startedAt) {
      this.line.draw(`${spinner} ${running.name.padEnd(8)} ${this.terminal.paint.dim(formatDuration(Date.now() - Date.parse(running.startedAt)))}`);
    } else {
      this.line.draw(
        `${spinner} ${task.status === 'queued' ? 'queued, waiting for a build worker' : task.status} ${this.terminal.paint.dim(formatDuration(Date.now() - Date.parse(task.createdAt)))}`,
      );
    }
  }

  /** A transient live line (the --watch countdown). */
  draw(text: string): void {
    this.line.draw(text);
  }

  note(text: string): void {
    this.line.print(text);
  }

  clear(): void {
    this.line.clear();
  }

  /** Findings and the outcome, once the task has finished (or as a snapshot for `status`). */
  summary(received: DeploymentTask): void {
    const task = visibleStrings(received);
    const { paint } = this.terminal;
    const lines: string[] = [];
    if (task.warnings.length) {
      lines.push('', paint.bold(`Warnings (${task.warnings.length})`));
      for (const warning of task.warnings) lines.push(...findingLines(warning, paint.yellow('⚠'), paint));
    }
    if (task.hazards.length) {
      lines.push('', paint.bold(`Hazards (${task.hazards.length})`));
      for (const hazard of task.hazards) {
        const colour = severityColour(hazard, paint);
        const severity = typeof hazard['severity'] === 'string' ? `${hazard['severity']} ` : '';
        lines.push(...findingLines(hazard, colour(`▲ ${severity}`.trimEnd()), paint));
      }
    }
    if (task.status === 'succeeded') {
      lines.push('', `${paint.green('✓')} Deployed ${paint.dim(`(task ${task.taskId})`)}${task.url ? `: ${paint.bold(paint.cyan(task.url))}` : ''}`);
    } else if (task.status === 'failed') {
      const [headline, ...tail] = failureLines(task, paint);
      lines.push('', `${paint.red('✗')} ${headline} ${paint.dim(`(task ${task.taskId})`)}`, ...tail);
    } else {
      lines.push('', `${task.status} ${paint.dim(`(task ${task.taskId}; follow it with: slipway status ${task.taskId} --wait)`)}`);
    }
    this.line.clear();
    this.terminal.out.write(`${lines.join('\n')}\n`);
  }

  /** Every step as a settled or pending line (for `status` without --wait). */
  snapshot(received: DeploymentTask): void {
    const task = visibleStrings(received);
    const { paint } = this.terminal;
    for (const step of task.steps) {
      if (isSettled(step)) this.terminal.out.write(`${stepLine(step, paint)}\n`);
      else if (step.status === 'running')
        this.terminal.out.write(
          `${paint.cyan('…')} ${step.name.padEnd(8)} ${paint.dim(step.startedAt ? `running for ${formatDuration(Date.now() - Date.parse(step.startedAt))}` : 'running')}\n`,
        );
      else this.terminal.out.write(`${paint.dim(`· ${step.name.padEnd(8)} pending`)}\n`);
    }
  }
}

function isSettled(step: DeploymentStep): boolean {
  return step.status === 'succeeded' || step.status === 'failed' || step.status === 'skipped';
}

function stepLine(step: DeploymentStep, paint: Terminal['paint']): string {
  const duration = step.durationMs ?? (step.startedAt && step.finishedAt ? Date.parse(step.finishedAt) - Date.parse(step.startedAt) : null);
  const took = duration === null ? '' : paint.dim(formatDuration(duration));
  switch (step.status) {
    case 'succeeded':
      return `${paint.green('✓')} ${step.name.padEnd(8)} ${took}`.trimEnd();
    case 'failed':
      return `${paint.red('✗')} ${step.name.padEnd(8)} ${took}`.trimEnd();
    case 'skipped':
      return paint.dim(`- ${step.name.padEnd(8)} skipped`);
    case 'pending':
    case 'running':
      return `${step.name}`;
  }
}

function findingLines(finding: Finding, marker: string, paint: Terminal['paint']): string[] {
  const lines = [`  ${marker} ${paint.bold(finding.code)}: ${finding.message}`];
  for (const [key, value] of Object.entries(finding)) {
    if (key === 'code' || key === 'message' || key === 'severity' || value === undefined || value === null) continue;
    lines.push(paint.dim(`      ${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`));
  }
  return lines;
}

function severityColour(finding: Finding, paint: Terminal['paint']): (text: string) => string {
  switch (String(finding['severity'] ?? '').toLowerCase()) {
    case 'critical':
    case 'high':
    case 'error':
      return paint.red;
    case 'low':
    case 'info':
      return paint.cyan;
    default:
      return paint.yellow;
  }
}

/** "Deploy failed at <step>: code: message", then the failing step's log tail (its control characters shown, as everywhere). */
export function failureLines(received: DeploymentTask, paint?: Terminal['paint']): string[] {
  const task = visibleStrings(received);
  const error = task.error;
  const lines = [`Deploy failed${error?.step ? ` at ${error.step}` : ''}: ${error ? `${error.code}: ${error.message}` : 'no reason given'}`];
  const step = task.steps.find((s) => s.name === error?.step) ?? task.steps.find((s) => s.status === 'failed');
  const tail = step?.log.trimEnd().split('\n').slice(-LOG_TAIL_LINES) ?? [];
  if (step && tail.join('').trim()) {
    const title = `Last lines of the ${step.name} log:`;
    lines.push('', paint ? paint.dim(title) : title, ...tail.map((l) => `  ${l}`));
  }
  return lines;
}
