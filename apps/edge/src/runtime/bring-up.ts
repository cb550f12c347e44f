import type { LoggerService } from '@nestjs/common';
import type { StartQueue } from './start-queue.js';

/** A restart that takes longer than this says how far it got, this often. */
const PROGRESS_EVERY_MS = 10_000;

export interface BringUpContext {
  /** `performance.now()` when the edge started. */
  startedAt: number;
  /** Of the releases, how many the runtime already ran (adopted, not started). */
  adopted: number;
  queue: Pick<StartQueue, 'concurrency' | 'active' | 'queued'>;
  logger: Pick<LoggerService, 'log' | 'warn'>;
  progressEveryMs?: number;
  /** True once the edge is stopping: no final line then (the waiting starts were dropped). */
  stopped?: () => boolean;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The edge's start brings every live Node release back (start-queue.ts): this logs, once all
 * answer, how long it took — the figure an operator restarting the whole platform wants —
 * `runtime: 40 releases answering 23.4 s after the edge started (4 at a time, most used first)`,
 * and on a long restart a progress line every 10 s. `answered`: one promise per release, true
 * once it answers, false when it could not be started (the edge logged why).
 */
export async function reportBringUp(answered: Promise<boolean>[], context: BringUpContext): Promise<void> {
  const total = answered.length;
  let up = 0;
  let failed = 0;
  const since = () => performance.now() - context.startedAt;
  const progress = setInterval(() => {
    const { active, queued } = context.queue;
    context.logger.log(
      `runtime: ${up} of ${total} releases answering after ${seconds(since())} (${active} starting, ${queued} waiting their turn${failed ? `, ${failed} could not start` : ''})`,
    );
  }, context.progressEveryMs ?? PROGRESS_EVERY_MS);
  progress.unref();
  try {
    await Promise.all(answered.map((p) => p.then((ok) => (ok ? (up += 1) : (failed += 1)))));
  } finally {
    clearInterval(progress);
  }
  if (context.stopped?.()) return;
  const cold = total - context.adopted;
  const how = context.adopted
    ? `${context.adopted} already running, adopted; ${cold} started ${context.queue.concurrency} at a time, most used first`
    : `${context.queue.concurrency} at a time, most used first`;
  const line = `runtime: ${up} release${up === 1 ? '' : 's'} answering ${seconds(since())} after the edge started (${how})`;
  if (failed) context.logger.warn(`${line}; ${failed} could not start (see above)`);
  else context.logger.log(line);
}
