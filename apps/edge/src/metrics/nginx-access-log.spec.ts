import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NginxAccessLog } from './nginx-access-log.js';

/** The metrics log's reader on lines written as nginx writes them: in blocks that cut lines anywhere. */
describe('NginxAccessLog', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-access-log-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const A = '01234567-89ab-cdef-0123-456789abcdef';
  const B = 'fedcba98-7654-3210-fedc-ba9876543210';
  const raw = (id: string) => id.replace(/-/g, '');

  async function read(file: string, blocks: string[]): Promise<[string, number, number][]> {
    const seen: [string, number, number][] = [];
    await writeFile(file, '');
    const log = new NginxAccessLog(
      file,
      async () => undefined,
      (id, status, ms) => seen.push([id, status, ms]),
      { readMs: 20 },
    );
    log.start();
    try {
      // The first read starts at the end (lines an earlier edge read are not counted again): let it.
      await new Promise((r) => setTimeout(r, 100));
      for (const block of blocks) {
        await appendFile(file, block);
        await new Promise((r) => setTimeout(r, 60));
      }
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await log.close();
    }
    return seen;
  }

  it('hands on each line once, whatever the blocks cut, with the id as a UUID and the time in ms', async () => {
    const text = `${raw(A)} 200 0.004\n${raw(A)} 502 1.250\n${raw(B)} 404 0.000\n${raw(A)} 201 12\n`;
    const seen = await read(join(dir, 'metrics.log'), [text.slice(0, 10), text.slice(10, 50), text.slice(50, 51), text.slice(51)]);
    expect(seen).toEqual([
      [A, 200, 4],
      [A, 502, 1250],
      [B, 404, 0],
      [A, 201, 12_000],
    ]);
  });

  it('skips what is not a line of the format (the fallback server, a torn or foreign line) and goes on', async () => {
    const lines = [
      ' 200 0.001',
      `${raw(A).toUpperCase()} 200 0.001`,
      `${raw(A).slice(1)} 200 0.001`,
      `${raw(A)} 2x0 0.001`,
      `${raw(A)} 200 0.0-1`,
      `${raw(A)} 200`,
      'x'.repeat(5000),
      `${raw(B)} 503 0.010`,
    ];
    const seen = await read(join(dir, 'metrics.log'), [`${lines.join('\n')}\n`]);
    expect(seen).toEqual([[B, 503, 10]]);
  });
});
