/**
 * The log budget with real child processes writing to real pipes into a real ring on disk: what
 * is kept stays within the rate, what is dropped is counted to the line in a marker, and past the
 * read rate the writer itself waits (back-pressure on its pipe: the runtime does not read it).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { LogBudget, type LogBudgetOptions } from './log-budget.js';
import { parseLogLine } from './log-lines.js';
import { LogRing, readLogRing } from './log-ring.js';

/** The ring's lines as the app wrote them (time and stream stamps off). */
function texts(stored: string): string {
  return stored
    .split('\n')
    .map((l) => (l ? parseLogLine(l, 'r').text : l))
    .join('\n');
}
import { ReleaseLog } from './release-log.js';

const KIB = 1024;

/**
 * Writes lines to stdout with blocking `write(2)` calls (as a process that does not use Node's
 * asynchronous stdout does), for `seconds` or `lines`, whichever ends first, then records how many
 * bytes the kernel took in `report` and exits.
 */
const WRITER = `
const fs = require('node:fs');
const [seconds, lines, report, size] = process.argv.slice(1);
const text = 'x'.repeat(Number(size) - 1) + '\\n';
const batch = Buffer.from(text.repeat(Math.max(1, Math.floor(16384 / text.length))));
const deadline = Date.now() + Number(seconds) * 1000;
let written = 0, left = Number(lines);
while (left > 0 && Date.now() < deadline) {
  const chunk = left * text.length < batch.length ? batch.subarray(0, left * text.length) : batch;
  try { written += fs.writeSync(1, chunk); left -= chunk.length / text.length; }
  catch (e) { if (e.code !== 'EAGAIN') throw e; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); }
}
fs.writeFileSync(report, String(written));
`;

interface Written {
  bytes: number;
  elapsedMs: number;
}

describe('ReleaseLog within a LogBudget, fed by real processes', () => {
  let dir: string;
  const logs: ReleaseLog[] = [];
  const budgets: LogBudget[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-release-log-'));
  });
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
    for (const budget of budgets.splice(0)) budget.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  async function releaseLog(
    name: string,
    options: LogBudgetOptions,
    budget = new LogBudget(options),
  ): Promise<{ log: ReleaseLog; file: string; budget: LogBudget }> {
    const file = join(dir, `${name}.log`);
    const log = new ReleaseLog(await LogRing.open(file, { maxBytes: 8 * 1024 * KIB, files: 2 }), budget);
    logs.push(log);
    budgets.push(budget);
    return { log, file, budget };
  }

  /** Runs the writer into `log`; resolves once it exited and both its pipes were read to the end. */
  async function write(log: ReleaseLog, seconds: number, lines: number, lineBytes = 100): Promise<Written> {
    const report = join(dir, `written-${Math.random()}`);
    const began = performance.now();
    const child = spawn(process.execPath, ['-e', WRITER, String(seconds), String(lines), report, String(lineBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number>((resolve) => child.once('exit', () => resolve(performance.now() - began)));
    const closed = Promise.all([child.stdout, child.stderr].map((s) => new Promise((r) => s.once('close', r))));
    log.attach(child.stdout);
    log.attach(child.stderr);
    const elapsedMs = await exited;
    await closed;
    return { bytes: Number(await readFile(report, 'utf8')), elapsedMs };
  }

  it('past the read rate the writer waits on its pipe: it gets rid of no more than the budget lets through', async () => {
    const options = { rateBytes: 64 * KIB, burstBytes: 64 * KIB, readRateBytes: 256 * KIB };
    const { log } = await releaseLog('flood', options);
    const written = await write(log, 2, 1e9);
    // What the runtime read (burst + read rate × time), plus what the pipe and the stream buffer hold.
    const bound = options.burstBytes + (options.readRateBytes * written.elapsedMs) / 1000 + 512 * KIB;
    process.stdout.write(`writer: ${written.bytes} bytes in ${Math.round(written.elapsedMs)} ms (bound ${Math.round(bound)})\n`);
    expect(written.bytes).toBeLessThanOrEqual(bound);
    expect(written.bytes).toBeGreaterThan(options.burstBytes);
  });

  it('keeps what the rate allows and counts every dropped line in a marker', async () => {
    const options = { rateBytes: 32 * KIB, burstBytes: 32 * KIB, readRateBytes: 64 * 1024 * KIB };
    const { log, file } = await releaseLog('drops', options);
    const lines = 30_000;
    const written = await write(log, 60, lines);
    expect(written.bytes).toBe(lines * 100);
    await log.close();
    const text = texts((await readLogRing(file, 2))!);
    const markers = [...text.matchAll(/^\[slipway\] log rate limit: dropped (\d+) lines \((\d+) bytes\) in the last (\d+) s$/gm)];
    const kept = text.split('\n').filter((l) => l.startsWith('xxx'));
    expect(markers.length).toBeGreaterThan(0);
    // Every line is either kept whole or counted as dropped.
    expect(kept.length + markers.reduce((sum, m) => sum + Number(m[1]), 0)).toBe(lines);
    expect(kept.length * 100 + markers.reduce((sum, m) => sum + Number(m[2]), 0)).toBe(lines * 100);
    expect(kept.every((l) => l.length === 99)).toBe(true);
    expect(kept.length * 100).toBeLessThanOrEqual(options.burstBytes + (options.rateBytes * written.elapsedMs) / 1000 + 100);
  });

  it("one app held at its budget does not hold another app's log", async () => {
    const { log: flooding } = await releaseLog('a', { rateBytes: 16 * KIB, burstBytes: 16 * KIB, readRateBytes: 64 * KIB });
    const { log: quiet, file } = await releaseLog('b', { rateBytes: 16 * KIB, burstBytes: 16 * KIB, readRateBytes: 64 * KIB });
    const flood = write(flooding, 2, 1e9);
    const ticker = spawn(
      process.execPath,
      ['-e', "let n = 0; const t = setInterval(() => { console.log('tick ' + ++n); if (n === 10) clearInterval(t); }, 50);"],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    quiet.attach(ticker.stdout);
    quiet.attach(ticker.stderr);
    const text = await waitFor(
      async () => {
        const read = texts(await readFile(file, 'utf8'));
        return read.includes('tick 10\n') ? read : undefined;
      },
      { timeoutMs: 10_000, what: "the quiet app's tenth line" },
    );
    expect(text.trimEnd().split('\n')).toEqual(Array.from({ length: 10 }, (_, i) => `tick ${i + 1}`));
    // …while the flooding app was still held at its read rate.
    const flooded = await flood;
    expect(flooded.bytes).toBeLessThanOrEqual(16 * KIB + (64 * KIB * flooded.elapsedMs) / 1000 + 512 * KIB);
  }, 60_000);

  it('cuts lines into whole lines per pipe, so stdout and stderr never interleave mid-line', async () => {
    const { log, file } = await releaseLog('mixed', { rateBytes: 1024 * KIB, burstBytes: 1024 * KIB, readRateBytes: 1024 * KIB });
    const script =
      "for (let i = 0; i < 200; i++) { process.stdout.write('out-' + i + '-'); process.stderr.write('err-' + i + '-'); process.stdout.write('end\\n'); process.stderr.write('end\\n'); }";
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = Promise.all([child.stdout, child.stderr].map((s) => new Promise((r) => s.once('close', r))));
    log.attach(child.stdout, 'stdout');
    log.attach(child.stderr, 'stderr');
    await closed;
    await log.close();
    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => parseLogLine(l, 'r'));
    expect(lines).toHaveLength(400);
    expect(lines.every((l) => /^(out|err)-\d+-end$/.test(l.text))).toBe(true);
    // Each line stamped with its pipe and a time.
    expect(
      lines.every(
        (l) => l.stream === (l.text.startsWith('out') ? 'stdout' : 'stderr') && l.time !== null && Math.abs(Date.parse(l.time) - Date.now()) < 60_000,
      ),
    ).toBe(true);
  });
});
