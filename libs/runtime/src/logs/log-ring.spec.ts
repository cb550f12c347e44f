/**
 * The log ring on real files: whatever is written, the files on disk stay within `files ×
 * maxBytes`, each file ends with a whole line, and reading across the ring gives the newest lines
 * in order.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogRing, readLogRing, readLogRingEndSync } from './log-ring.js';

const line = (n: number) => `line ${String(n).padStart(7, '0')} ${'x'.repeat(40)}\n`;

describe('LogRing', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-log-ring-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps at most files × maxBytes however much is written, oldest rotated away, lines whole and in order', async () => {
    const file = join(dir, 'r.log');
    const ring = await LogRing.open(file, { maxBytes: 64 * 1024, files: 3 });
    const total = 20_000; // ~1 MiB: about 16 times the ring
    for (let n = 0; n < total; n += 1) {
      if (!ring.write(line(n))) await ring.drained();
    }
    await ring.close();

    const names = (await readdir(dir)).sort();
    expect(names).toEqual(['r.log', 'r.log.1', 'r.log.2']);
    for (const name of names) {
      const size = (await stat(join(dir, name))).size;
      expect(size).toBeLessThanOrEqual(64 * 1024);
      expect((await readFile(join(dir, name), 'utf8')).endsWith('\n')).toBe(true);
    }
    const text = (await readLogRing(file, 3))!;
    const lines = text.trimEnd().split('\n');
    const first = Number(/line (\d+)/.exec(lines[0]!)![1]);
    // Consecutive from the oldest kept line to the very last one written.
    expect(lines).toEqual(Array.from({ length: total - first }, (_, i) => line(first + i).trimEnd()));
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * 64 * 1024 - line(0).length * 2);
  });

  it('continues an existing file on reopen (a restarted runtime) and still rotates at maxBytes', async () => {
    const file = join(dir, 'r.log');
    let ring = await LogRing.open(file, { maxBytes: 1000, files: 2 });
    ring.write('a'.repeat(599) + '\n');
    await ring.close();
    ring = await LogRing.open(file, { maxBytes: 1000, files: 2 });
    ring.write('b'.repeat(599) + '\n');
    await ring.close();
    expect((await stat(file)).size).toBe(600);
    expect((await readFile(`${file}.1`, 'utf8')).startsWith('a')).toBe(true);
  });

  it('cuts a line longer than a file, and a single file is started afresh when full', async () => {
    const file = join(dir, 'r.log');
    const ring = await LogRing.open(file, { maxBytes: 100, files: 1 });
    ring.write('y'.repeat(250) + '\n');
    ring.write('last\n');
    await ring.close();
    expect(await readdir(dir)).toEqual(['r.log']);
    expect(await readFile(file, 'utf8')).toBe('y'.repeat(50) + '\nlast\n');
  });

  it('reads only the end across files with lastBytes, and nothing for a release without a log', async () => {
    const file = join(dir, 'r.log');
    const ring = await LogRing.open(file, { maxBytes: 100, files: 3 });
    for (let n = 0; n < 10; n += 1) ring.write(`${String(n).repeat(39)}\n`);
    await ring.close();
    const end = (await readLogRing(file, 3, 60))!;
    expect(end).toBe(`${'8'.repeat(19)}\n${'9'.repeat(39)}\n`);
    // Just after a rotation the current file is short: the tail reaches into the previous one.
    expect(readLogRingEndSync(file, 3, 100)).toBe(`${'7'.repeat(19)}\n${'8'.repeat(39)}\n${'9'.repeat(39)}\n`);
    expect(await readLogRing(join(dir, 'other.log'), 3)).toBeUndefined();
    expect(readLogRingEndSync(join(dir, 'other.log'), 3, 100)).toBe('');
  });
});
