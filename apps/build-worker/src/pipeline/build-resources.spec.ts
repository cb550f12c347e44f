import type { CgroupStats } from '@slipway/sandbox';
import { limitFailure, nearLimitWarning, usageLine, usageRecord } from './build-resources.js';

const MiB = 1024 * 1024;
const stats = (over: Partial<CgroupStats> = {}): CgroupStats => ({
  memoryPeakBytes: 412 * MiB,
  memoryLimitBytes: 2048 * MiB,
  oomKills: 0,
  memoryLimitHits: 0,
  cpuSeconds: 12.345,
  tasksPeak: 37,
  tasksLimit: 1024,
  pidsLimitHits: 0,
  ...over,
});

describe('what a build command used of its limits', () => {
  it('the step log line says peak memory against the limit, CPU seconds and peak tasks', () => {
    const use = usageRecord('build', 'npm run build', stats());
    expect(use).toEqual({
      step: 'build',
      command: 'npm run build',
      peakMemoryBytes: 412 * MiB,
      memoryLimitBytes: 2048 * MiB,
      cpuSeconds: 12.35,
      peakTasks: 37,
      tasksLimit: 1024,
      limitHit: null,
    });
    expect(usageLine(use)).toBe('resources: peak memory 412 MiB of 2.00 GiB (20%), CPU 12.3 s, at most 37 of 1024 tasks at once');
    expect(nearLimitWarning(use)).toBeNull();
    expect(limitFailure('npm run build', use)).toBeNull();
  });

  it('peak memory at 80% of the limit or more is a warning naming the command and the setting', () => {
    const warning = nearLimitWarning(usageRecord('install', 'npm ci', stats({ memoryPeakBytes: 1700 * MiB })));
    expect(warning).toMatchObject({ code: 'build_memory_near_limit', detail: 'install' });
    expect(warning!.message).toMatch(/`npm ci` \(install\) used up to 1\.66 GiB of the 2\.00 GiB .*\(83%\).*build_memory_exceeded.*BUILD_MEMORY_MB/);
    expect(nearLimitWarning(usageRecord('install', 'npm ci', stats({ memoryPeakBytes: 1600 * MiB })))).toBeNull();
  });

  it('an OOM kill is build_memory_exceeded, and wins over a refused fork', () => {
    const use = usageRecord('build', 'npm run build', stats({ memoryPeakBytes: 2048 * MiB, oomKills: 1, pidsLimitHits: 3 }));
    expect(use.limitHit).toBe('memory');
    expect(usageLine(use)).toMatch(/\(100%\).*the memory limit was reached and the kernel killed a process$/);
    const failure = limitFailure('npm run build', use)!;
    expect(failure.code).toBe('build_memory_exceeded');
    expect(failure.message).toMatch(/more memory than a build may \(2\.00 GiB, no swap\) \(peak 2\.00 GiB\).*BUILD_MEMORY_MB/);
    // Killed by the limit, it is not also warned about.
    expect(nearLimitWarning(use)).toBeNull();
  });

  it('a refused fork is build_too_many_processes (for a command that then failed: the caller checks the exit)', () => {
    const failure = limitFailure('npm run build', usageRecord('build', 'npm run build', stats({ tasksPeak: 1024, pidsLimitHits: 12 })))!;
    expect(failure.code).toBe('build_too_many_processes');
    expect(failure.message).toMatch(/more than the 1024 processes and threads .* \(1024 at once\).*BUILD_PIDS/);
  });

  it('where the kernel does not say, the line says the limits', () => {
    expect(usageLine(usageRecord('build', 'x', stats({ memoryPeakBytes: null, cpuSeconds: null, tasksPeak: null })))).toBe(
      'resources: memory limit 2.00 GiB, tasks limit 1024',
    );
  });
});
