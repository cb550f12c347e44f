import { PeriodicTask } from './periodic-task.js';

describe('PeriodicTask', () => {
  it('runs at start and then every interval, one run at a time; a failure is reported and the next tick runs again', async () => {
    const errors: string[] = [];
    let runs = 0;
    let release: () => void = () => undefined;
    const task = new PeriodicTask(
      async () => {
        runs++;
        if (runs === 2) throw new Error('second run failed');
        if (runs === 3) await new Promise<void>((ok) => (release = ok));
      },
      (error) => errors.push(error.message),
    );
    await task.tick();
    await task.tick();
    expect([runs, errors]).toEqual([2, ['second run failed']]);
    const third = task.tick();
    // A tick while the third run is going is that same run, not another.
    expect(task.tick()).toBe(third);
    expect(runs).toBe(3);
    release();
    await third;
    task.start(20, 0);
    await new Promise((ok) => setTimeout(ok, 120));
    await task.stop();
    const after = runs;
    expect(after).toBeGreaterThan(4);
    await new Promise((ok) => setTimeout(ok, 60));
    expect(runs).toBe(after);
  });
});
