import type { BuildResourceUse, Warning } from '@slipway/analyzer';
import { LIMITS } from '@slipway/contract';
import type { CommandUsage } from '../sandbox/build-limits.js';
import { StepFailure } from './step-recorder.js';

const MiB = 1024 * 1024;

function size(bytes: number): string {
  return bytes >= 1024 * MiB ? `${(bytes / 1024 / MiB).toFixed(2)} GiB` : `${Math.round(bytes / MiB)} MiB`;
}

function percent(part: number, whole: number): number {
  return Math.round((part / whole) * 100);
}

/** Where a deploy records what its commands used (DeployContext). */
export interface UsageLedger {
  recordUsage(use: BuildResourceUse): void;
}

/** Which limit a finished command ran into: an OOM kill, or at least one fork refused at pids.max. */
export function limitHit(usage: CommandUsage): BuildResourceUse['limitHit'] {
  if (usage.oomKills > 0) return 'memory';
  if (usage.pidsLimitHits > 0) return 'tasks';
  return null;
}

export function usageRecord(step: string, command: string, usage: CommandUsage): BuildResourceUse {
  return {
    step,
    command,
    peakMemoryBytes: usage.memoryPeakBytes,
    memoryLimitBytes: usage.memoryLimitBytes,
    cpuSeconds: usage.cpuSeconds === null ? null : Math.round(usage.cpuSeconds * 100) / 100,
    peakTasks: usage.tasksPeak,
    tasksLimit: usage.tasksLimit,
    limitHit: limitHit(usage),
  };
}

/** The step log's line: `resources: peak memory 412 MiB of 2.00 GiB (20%), CPU 12.3 s, at most 37 of 1024 tasks at once`. */
export function usageLine(use: BuildResourceUse): string {
  const parts = [
    use.peakMemoryBytes === null
      ? `memory limit ${size(use.memoryLimitBytes)}`
      : `peak memory ${size(use.peakMemoryBytes)} of ${size(use.memoryLimitBytes)} (${percent(use.peakMemoryBytes, use.memoryLimitBytes)}%)`,
    use.cpuSeconds === null ? null : `CPU ${use.cpuSeconds.toFixed(1)} s`,
    use.peakTasks === null ? `tasks limit ${use.tasksLimit}` : `at most ${use.peakTasks} of ${use.tasksLimit} tasks at once`,
  ];
  const hit =
    use.limitHit === 'memory'
      ? '; the memory limit was reached and the kernel killed a process'
      : use.limitHit === 'tasks'
        ? '; the process limit was reached (a fork was refused)'
        : '';
  return `resources: ${parts.filter(Boolean).join(', ')}${hit}`;
}

/** A command whose peak memory came near its limit: it works today, a little more and it fails. */
export function nearLimitWarning(use: BuildResourceUse): Warning | null {
  if (use.peakMemoryBytes === null || use.limitHit === 'memory') return null;
  const used = percent(use.peakMemoryBytes, use.memoryLimitBytes);
  if (used < LIMITS.build.memoryWarnPercent) return null;
  return {
    code: 'build_memory_near_limit',
    detail: use.step,
    message: `\`${use.command}\` (${use.step}) used up to ${size(use.peakMemoryBytes)} of the ${size(use.memoryLimitBytes)} a build may use (${used}%): a little more and the deploy fails with build_memory_exceeded. Make the build use less memory (e.g. NODE_OPTIONS=--max-old-space-size=…) or ask the operator for a higher BUILD_MEMORY_MB.`,
  };
}

/**
 * The failure a limit explains, for a command that did not succeed. Memory first (the OOM killer
 * leaves no doubt); then processes: a command that exits unsuccessfully after the kernel refused
 * it at least one fork is attributed to the process limit — a refused fork (EAGAIN) is what makes
 * `npm`, a shell or a bundler's worker pool give up, and the tenant learns which limit to respect
 * (the step log still has the command's own output).
 */
export function limitFailure(command: string, use: BuildResourceUse): StepFailure | null {
  if (use.limitHit === 'memory') {
    const peak = use.peakMemoryBytes === null ? '' : ` (peak ${size(use.peakMemoryBytes)})`;
    return new StepFailure(
      'build_memory_exceeded',
      `\`${command}\` used more memory than a build may (${size(use.memoryLimitBytes)}, no swap)${peak} and the kernel stopped it. Make the build use less memory (e.g. NODE_OPTIONS=--max-old-space-size=…), or ask the operator for a higher BUILD_MEMORY_MB.`,
    );
  }
  if (use.limitHit === 'tasks') {
    const peak = use.peakTasks === null ? '' : ` (${use.peakTasks} at once)`;
    return new StepFailure(
      'build_too_many_processes',
      `\`${command}\` tried to run more than the ${use.tasksLimit} processes and threads a build may run at once${peak}, and failed. Run fewer in parallel (worker pools, \`make -j\`), or ask the operator for a higher BUILD_PIDS.`,
    );
  }
  return null;
}
