import { ReleaseWatch, isErrorLine } from './release-watch.js';

describe('ReleaseWatch', () => {
  it('counts stderr error lines once per error, across chunk boundaries, and keeps the first few', () => {
    const watch = new ReleaseWatch();
    watch.stderr('error: one\nError: two\n    at f (file.js:1:2)\n    at g (file.js:3:4)\n');
    watch.stderr('(node:12) [DEP0005] DeprecationWarning: Buffer() is deprecated\n(Use `node --trace-deprecation ...` to show where)\n');
    watch.stderr('partial err');
    expect(watch.report().errorLines).toBe(2);
    watch.stderr('or line\n\n');
    expect(watch.report()).toMatchObject({ errorLines: 3, errorExcerpt: ['error: one', 'Error: two', 'partial error line'], crashes: 0 });
    for (let i = 0; i < 20; i++) watch.stderr(`e${i}\n`);
    expect(watch.report().errorLines).toBe(23);
    expect(watch.report().errorExcerpt).toHaveLength(5);
  });

  it('bounds a line that never ends', () => {
    const watch = new ReleaseWatch();
    for (let i = 0; i < 100; i++) watch.stderr('x'.repeat(1000));
    expect(watch.report().errorLines).toBeGreaterThan(0);
    expect(watch.report().errorExcerpt[0]!.length).toBeLessThanOrEqual(300);
  });

  it('records crashes, restarts and the output before the first crash (read a moment after the exit)', async () => {
    const watch = new ReleaseWatch();
    let log = 'listening\n';
    watch.crashed('1', () => log);
    log += 'Error: the queue is gone\n[slipway] process exited (1)\n';
    watch.restarted();
    watch.crashed('SIGKILL', () => 'later output');
    await new Promise((r) => setTimeout(r, 300));
    expect(watch.report()).toMatchObject({ crashes: 2, restarts: 1, lastExit: 'SIGKILL', crashExcerpt: 'listening\nError: the queue is gone' });
  });

  it('takes blank lines, stack frames and Node warnings as no errors', () => {
    expect(
      [
        '',
        '   ',
        '    at x (y.js:1:1)',
        '    ... 4 more',
        '(node:1) Warning: w',
        '(node:77) [DEP0040] DeprecationWarning: punycode',
        'npm notice New major version of npm available!',
        'npm error code 3',
      ].some(isErrorLine),
    ).toBe(false);
    expect(['TypeError: x is not a function', 'error', 'payment failed'].every(isErrorLine)).toBe(true);
  });
});
