import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CacheEntryRejected } from './cache-manifest.js';
import { CopyBudgetExceeded, copyFilesHashed } from './tree-copier.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('copyFilesHashed (worker threads, real files)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tree-copier-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("copies many files in the jobs' order with their digests, source modes, the mode and owner asked for", async () => {
    const jobs = [];
    for (let i = 0; i < 300; i++) {
      await writeFile(join(dir, `f${i}`), `file ${i}\n`.repeat(i), { mode: i % 2 ? 0o755 : 0o644 });
      jobs.push({ from: join(dir, `f${i}`), to: join(dir, `c${i}`), mode: 0o640 });
    }
    const copied = await copyFilesHashed(jobs, { owner: { uid: 200_123, gid: 200_124 } });
    expect(copied.map((c) => c.sha256)).toEqual(jobs.map((_, i) => sha(`file ${i}\n`.repeat(i))));
    expect(copied.map((c) => c.sourceMode)).toEqual(jobs.map((_, i) => (i % 2 ? 0o755 : 0o644)));
    const info = await stat(join(dir, 'c299'));
    expect([info.mode & 0o777, info.uid, info.gid, info.size]).toEqual([0o640, 200_123, 200_124, 'file 299\n'.length * 299]);
    expect(await readFile(join(dir, 'c7'), 'utf8')).toBe('file 7\n'.repeat(7));
  });

  it('refuses a link, a FIFO (without waiting on it) and a file that differs from what is expected', async () => {
    await writeFile(join(dir, 'real'), 'genuine');
    await symlink('/etc/passwd', join(dir, 'link'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    let copies = 0;
    const job = (name: string, expected?: { size: number; sha256: string }) => ({
      from: join(dir, name),
      to: join(dir, `${name}.copy${++copies}`),
      mode: 0o600,
      expected,
    });
    await expect(copyFilesHashed([job('link')])).rejects.toThrow(new CacheEntryRejected(`${join(dir, 'link')} is a link, not a file`));
    await expect(copyFilesHashed([job('fifo')])).rejects.toThrow(CacheEntryRejected);
    await expect(copyFilesHashed([job('real', { size: 7, sha256: sha('genuinE') })])).rejects.toThrow(/real does not match its digest in the manifest/);
    await expect(copyFilesHashed([job('real', { size: 8, sha256: sha('genuine') })])).rejects.toThrow(/real has 7 bytes, the manifest says 8/);
    await expect(copyFilesHashed([job('real', { size: 7, sha256: sha('genuine') })])).resolves.toEqual([
      { size: 7, sha256: sha('genuine'), sourceMode: expect.any(Number) },
    ]);
  });

  it('stops at its byte budget across all threads, and never writes over what exists', async () => {
    const jobs = [];
    for (let i = 0; i < 200; i++) {
      await writeFile(join(dir, `f${i}`), 'x'.repeat(1000));
      jobs.push({ from: join(dir, `f${i}`), to: join(dir, `c${i}`), mode: 0o600 });
    }
    await expect(copyFilesHashed(jobs, { maxBytes: 150_000 })).rejects.toThrow(CopyBudgetExceeded);
    await expect(copyFilesHashed(jobs.slice(0, 150), { maxBytes: 150_000 })).rejects.toMatchObject({ code: 'EEXIST' });
  });
});
