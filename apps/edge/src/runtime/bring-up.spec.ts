/** The bring-up report on real timers: progress while it lasts, one line with the time at the end. */
import { reportBringUp } from './bring-up.js';

const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

function logger() {
  const lines: { level: 'log' | 'warn'; text: string }[] = [];
  return { lines, log: (text: string) => lines.push({ level: 'log', text }), warn: (text: string) => lines.push({ level: 'warn', text }) };
}

describe('reportBringUp', () => {
  it('says how far a long restart got, then how long all took', async () => {
    const log = logger();
    const queue = { concurrency: 2, active: 2, queued: 1 };
    await reportBringUp([after(20, true), after(40, true), after(250, true)], {
      startedAt: performance.now(),
      adopted: 0,
      queue,
      logger: log,
      progressEveryMs: 100,
    });
    const progress = log.lines.filter((l) => /of 3 releases answering after/.test(l.text));
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]!.text).toMatch(/^runtime: 2 of 3 releases answering after \d+\.\d s \(2 starting, 1 waiting their turn\)$/);
    expect(log.lines.at(-1)).toEqual({
      level: 'log',
      text: expect.stringMatching(/^runtime: 3 releases answering \d+\.\d s after the edge started \(2 at a time, most used first\)$/),
    });
  });

  it('names the adopted ones and the ones that could not start', async () => {
    const log = logger();
    await reportBringUp([Promise.resolve(true), Promise.resolve(true), Promise.resolve(false)], {
      startedAt: performance.now(),
      adopted: 1,
      queue: { concurrency: 4, active: 0, queued: 0 },
      logger: log,
    });
    expect(log.lines).toEqual([
      {
        level: 'warn',
        text: expect.stringMatching(
          /^runtime: 2 releases answering \d+\.\d s after the edge started \(1 already running, adopted; 2 started 4 at a time, most used first\); 1 could not start \(see above\)$/,
        ),
      },
    ]);
  });
});
