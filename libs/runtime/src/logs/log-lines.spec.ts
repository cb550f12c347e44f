/**
 * The stamped line format of a release's log ring, and reading it back by time across a rotation.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLogLine, readReleaseLines, stampLines } from './log-lines.js';
import { LogRing } from './log-ring.js';

describe('log lines', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-log-lines-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stamps each line with time and stream, and parses it back', () => {
    const at = new Date('2025-03-04T05:06:07.089Z');
    const stamped = stampLines(Buffer.from('one\ntwo words \x1b[31m\n'), 'stderr', at).toString('utf8');
    expect(stamped).toBe('2025-03-04T05:06:07.089Z stderr one\n2025-03-04T05:06:07.089Z stderr two words \x1b[31m\n');
    expect(parseLogLine(stamped.split('\n')[1]!, 'rel')).toEqual({
      time: '2025-03-04T05:06:07.089Z',
      stream: 'stderr',
      text: 'two words \x1b[31m',
      releaseId: 'rel',
    });
    // An unstamped line (written before stamping) is stdout without a time.
    expect(parseLogLine('plain old line', 'rel')).toEqual({ time: null, stream: 'stdout', text: 'plain old line', releaseId: 'rel' });
  });

  it('reads lines by time window across the ring, oldest first', async () => {
    const file = join(dir, 'r.log');
    const ring = await LogRing.open(file, { maxBytes: 200, files: 3 });
    const base = Date.parse('2025-01-01T00:00:00.000Z');
    for (let i = 0; i < 8; i++) ring.write(stampLines(Buffer.from(`line ${i}\n`), 'stdout', new Date(base + i * 1000)));
    await ring.close();
    const all = await readReleaseLines(file, 3, 'r');
    // 8 lines of 39 bytes, 5 to a 200-byte file: all 8 kept over two files.
    expect(all.map((l) => l.text)).toEqual(Array.from({ length: 8 }, (_, i) => `line ${i}`));
    const window = await readReleaseLines(file, 3, 'r', { since: base + 2000, until: base + 6000 });
    expect(window.map((l) => l.text)).toEqual(['line 2', 'line 3', 'line 4', 'line 5']);
    expect(window[0]).toEqual({ time: '2025-01-01T00:00:02.000Z', stream: 'stdout', text: 'line 2', releaseId: 'r' });
  });
});
