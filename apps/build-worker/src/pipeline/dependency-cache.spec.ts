import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, chmod, cp, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { detectSandbox } from '../sandbox/sandbox-detect.js';
import type { Owner } from './cache-tree.js';
import { DependencyCache, ENTRIES_PER_APPLICATION } from './dependency-cache.js';

const run = promisify(execFile);
const masterKey = randomBytes(32).toString('base64');

/** A small installed tree: nested packages, an executable, a bin link, an empty and a read-only directory. */
async function installInto(workspace: string, marker = 'genuine'): Promise<void> {
  const nm = join(workspace, 'node_modules');
  await mkdir(join(nm, 'pkg-a', 'bin'), { recursive: true });
  await mkdir(join(nm, 'pkg-b', 'lib', 'deep'), { recursive: true });
  await mkdir(join(nm, 'pkg-c'), { recursive: true });
  await mkdir(join(nm, '.bin'));
  await mkdir(join(nm, 'empty'));
  await writeFile(join(nm, 'pkg-a', 'index.js'), `module.exports = () => '${marker}';\n`);
  await writeFile(join(nm, 'pkg-a', 'package.json'), '{"name":"pkg-a","bin":"bin/cli.js"}');
  await writeFile(join(nm, 'pkg-a', 'bin', 'cli.js'), '#!/usr/bin/env node\nconsole.log(1)\n', { mode: 0o755 });
  await writeFile(join(nm, 'pkg-b', 'lib', 'deep', 'x.js'), randomBytes(3000).toString('base64'));
  await writeFile(join(nm, 'pkg-c', 'readme'), 'read only');
  await chmod(join(nm, 'pkg-c'), 0o555);
  await symlink('../pkg-a/bin/cli.js', join(nm, '.bin', 'cli'));
  await symlink('pkg-b/lib', join(nm, 'b-lib'));
  await writeFile(join(workspace, 'package-lock.json'), `{"lockfileVersion":3,"marker":"${marker}"}`);
}

/** path → "type mode content-or-target", for comparing two trees. */
async function describeTree(dir: string, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, prefix))).sort()) {
    const path = prefix ? `${prefix}/${name}` : name;
    const info = await lstat(join(dir, path));
    if (info.isSymbolicLink()) out[path] = `link ${await readlink(join(dir, path))}`;
    else if (info.isDirectory()) {
      out[path] = `dir ${(info.mode & 0o777).toString(8)}`;
      Object.assign(out, await describeTree(dir, path));
    } else out[path] = `file ${(info.mode & 0o777).toString(8)} ${await readFile(join(dir, path), 'utf8')}`;
  }
  return out;
}

async function asBuildUser(command: string): Promise<{ code: number; output: string }> {
  return run('runuser', ['-u', 'slipway-build', '--', 'sh', '-c', command]).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
  );
}

describe('dependency cache (real files, real build user)', () => {
  let base: string;
  let root: string;
  let owner: Owner;
  let cache: DependencyCache;
  let n = 0;

  const workspace = async (marker?: string): Promise<string> => {
    const dir = join(base, `ws-${++n}`);
    await mkdir(dir);
    if (marker) await installInto(dir, marker);
    return dir;
  };
  const entryDirs = async (applicationId: string): Promise<string[]> => {
    const out: string[] = [];
    for (const lock of await readdir(join(root, applicationId)).catch(() => [])) {
      if (!lock.startsWith('.')) for (const toolchain of await readdir(join(root, applicationId, lock))) out.push(join(root, applicationId, lock, toolchain));
    }
    return out;
  };
  /** Saves a fresh install of `marker` for the app; returns its key and its entry directory. */
  const seed = async (applicationId: string, marker = 'genuine') => {
    const ws = await workspace(marker);
    const key = await cache.keyFor(applicationId, ws, 'package-lock.json', 'npm');
    expect(await cache.save(key, ws)).toMatchObject({ saved: true });
    const [entry] = (await entryDirs(applicationId)).filter((dir) => dir.includes(key.lockfileSha256));
    return { key, entry: entry!, ws };
  };

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'dependency-cache-spec-'));
    await chmod(base, 0o755);
    // The build user and bwrap must work here for this test (detectSandbox throws with the reason).
    const mode = await detectSandbox('slipway-build', join(base, 'workspaces'));
    owner = { uid: mode.uid, gid: mode.gid };
    root = join(base, 'cache');
    cache = new DependencyCache({ root, downloads: join(base, 'downloads'), masterKey, maxBytes: 64 * 1024 * 1024 });
  });
  afterAll(async () => {
    await run('chmod', ['-R', 'u+w', base]);
    await rm(base, { recursive: true, force: true });
  });

  it('restores a verified copy: same files, modes and in-tree links, owned by the build user', async () => {
    const { key, ws } = await seed('app-roundtrip');
    const target = await workspace();
    const restored = await cache.restore(key, target, owner);
    expect(restored).toMatchObject({ hit: true, files: 5 });
    expect(await describeTree(join(target, 'node_modules'))).toEqual(await describeTree(join(ws, 'node_modules')));
    for (const path of ['', 'pkg-a/index.js', 'pkg-c', '.bin/cli']) {
      expect(await lstat(join(target, 'node_modules', path))).toMatchObject({ uid: owner.uid, gid: owner.gid });
    }
  });

  it('is a miss for another application, lockfile or package manager', async () => {
    const { ws } = await seed('app-keyed');
    for (const key of [
      await cache.keyFor('app-other', ws, 'package-lock.json', 'npm'),
      { ...(await cache.keyFor('app-keyed', ws, 'package-lock.json', 'npm')), lockfileSha256: 'f'.repeat(64) },
      await cache.keyFor('app-keyed', ws, 'package-lock.json', 'pnpm'),
    ]) {
      expect(await cache.restore(key, await workspace(), owner)).toEqual({ hit: false, reason: null });
    }
  });

  it('never caches an install with a link leaving the workspace', async () => {
    for (const target of ['/etc', '../../../..', '../../..']) {
      const ws = await workspace('links');
      await symlink(target, join(ws, 'node_modules', 'pkg-a', 'escape'));
      const key = await cache.keyFor(`app-link-${++n}`, ws, 'package-lock.json', 'npm');
      expect(await cache.save(key, ws)).toEqual({ saved: false, reason: `node_modules/pkg-a/escape links outside the workspace (${target})` });
      expect(await entryDirs(key.applicationId)).toEqual([]);
    }
    // Nor one holding a FIFO (reading it would block the worker) or another special file.
    const fifo = await workspace('fifo');
    await run('mkfifo', [join(fifo, 'node_modules', 'pkg-a', 'pipe')]);
    expect(await cache.save(await cache.keyFor('app-fifo', fifo, 'package-lock.json', 'npm'), fifo)).toEqual({
      saved: false,
      reason: 'node_modules/pkg-a/pipe is not a file, directory or link',
    });
    // Up to the workspace itself is in the tree (a workspace package, say).
    const ws = await workspace('links');
    await symlink('../../src', join(ws, 'node_modules', 'pkg-a', 'local'));
    expect(await cache.save(await cache.keyFor('app-link-ok', ws, 'package-lock.json', 'npm'), ws)).toMatchObject({ saved: true });
  });

  it("the build user can neither list the cache nor read or write another application's entry", async () => {
    const { key, entry } = await seed('app-victim');
    expect(await stat(root)).toMatchObject({ uid: 0 });
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    const file = join(entry, 'tree', 'pkg-a', 'index.js');
    const attempts = [
      `ls ${root}`,
      `ls ${join(root, 'app-victim')}`,
      `cat ${file}`,
      `echo "module.exports = () => 'pwned'" > ${file}`,
      `mkdir -p ${join(root, 'app-victim', 'x')}`,
      `rm -rf ${entry}`,
    ];
    for (const command of attempts) {
      const result = await asBuildUser(command);
      expect({ command, refused: result.code !== 0 && result.output.includes('Permission denied') }).toEqual({ command, refused: true });
    }
    const restored = await cache.restore(key, await workspace(), owner);
    expect(restored).toMatchObject({ hit: true });
    // And its own download cache is the build user's, outside the entries' tree.
    const downloads = await cache.downloadCacheDir('app-victim', owner);
    expect(downloads.startsWith(`${root}/`)).toBe(false);
    expect((await asBuildUser(`touch ${downloads}/ok && ls ${join(base, 'downloads')}`)).output).toContain('Permission denied');
  });

  const tampering: [string, (entry: string) => Promise<void>, RegExp][] = [
    [
      'a file edited in place (same size)',
      (e) => writeFile(join(e, 'tree/pkg-a/index.js'), "module.exports = () => 'pwned!!';\n"),
      /pkg-a\/index\.js does not match its digest/,
    ],
    [
      'a file grown',
      (e) => appendFile(join(e, 'tree/pkg-a/index.js'), 'require("child_process").exec("curl evil")'),
      /pkg-a\/index\.js has \d+ bytes, the manifest says \d+/,
    ],
    [
      'a file replaced by a link out of the tree',
      async (e) => {
        await unlink(join(e, 'tree/pkg-a/index.js'));
        await symlink('/etc/passwd', join(e, 'tree/pkg-a/index.js'));
      },
      /pkg-a\/index\.js is a link, the manifest says file/,
    ],
    [
      'a link retargeted',
      async (e) => {
        await unlink(join(e, 'tree/.bin/cli'));
        await symlink('../../../../../../etc/passwd', join(e, 'tree/.bin/cli'));
      },
      /\.bin\/cli links to .*etc\/passwd, the manifest says \.\.\/pkg-a\/bin\/cli\.js/,
    ],
    ['a file added', (e) => writeFile(join(e, 'tree/pkg-a/postinstall.js'), 'evil'), /pkg-a\/postinstall\.js is not in the manifest/],
    ['a file removed', (e) => unlink(join(e, 'tree/pkg-b/lib/deep/x.js')), /1 paths of the manifest are missing/],
    [
      'file and manifest edited together without the master key',
      async (e) => {
        const evil = "module.exports = () => 'pwned!!';\n";
        await writeFile(join(e, 'tree/pkg-a/index.js'), evil);
        const raw = await readFile(join(e, 'manifest'), 'utf8');
        const [header, body] = [raw.slice(0, raw.indexOf('\n')), JSON.parse(raw.slice(raw.indexOf('\n') + 1))];
        const file = body.entries.find((x: { path: string }) => x.path === 'pkg-a/index.js');
        file.sha256 = (await import('node:crypto')).createHash('sha256').update(evil).digest('hex');
        await writeFile(join(e, 'manifest'), `${header}\n${JSON.stringify(body)}`);
      },
      /manifest seal does not verify/,
    ],
  ];

  it.each(tampering)('an entry with %s is discarded, never served, and the next install is cached again', async (_, tamper, reason) => {
    const applicationId = `app-tamper-${++n}`;
    const { key, entry } = await seed(applicationId);
    await tamper(entry);
    const target = await workspace();
    const restored = await cache.restore(key, target, owner);
    expect(restored).toEqual({ hit: false, reason: expect.stringMatching(reason), discarded: true });
    expect(await stat(join(target, 'node_modules')).catch(() => null)).toBeNull();
    expect(await entryDirs(applicationId)).toEqual([]);
    // The fresh install that follows is stored and restores cleanly.
    await installInto(target);
    expect(await cache.save(key, target)).toMatchObject({ saved: true });
    const again = await workspace();
    expect(await cache.restore(key, again, owner)).toMatchObject({ hit: true });
    expect(await readFile(join(again, 'node_modules/pkg-a/index.js'), 'utf8')).toContain('genuine');
  });

  it('an entry moved from one application to another does not open', async () => {
    const victim = await seed('app-moved-to', 'victim');
    const attacker = await seed('app-moved-from', 'victim');
    expect(attacker.key.lockfileSha256).toBe(victim.key.lockfileSha256);
    await rm(victim.entry, { recursive: true });
    await cp(attacker.entry, victim.entry, { recursive: true, verbatimSymlinks: true });
    expect(await cache.restore(victim.key, await workspace(), owner)).toEqual({
      hit: false,
      reason: 'the manifest belongs to another application, lockfile or toolchain',
      discarded: true,
    });
  });

  /** Saves one entry per marker and dates their last use a minute apart (oldest first). */
  const saveAged = async (target: DependencyCache, dir: string, entries: [applicationId: string, marker: string][]) => {
    const keys = [];
    for (const [i, [applicationId, marker]] of entries.entries()) {
      const ws = await workspace(marker);
      const key = await target.keyFor(applicationId, ws, 'package-lock.json', 'npm');
      expect(await target.save(key, ws)).toMatchObject({ saved: true });
      const when = new Date(Date.now() - (10 - i) * 60_000);
      for (const toolchain of await readdir(join(dir, applicationId, key.lockfileSha256)))
        await utimes(join(dir, applicationId, key.lockfileSha256, toolchain), when, when);
      keys.push(key);
    }
    return keys;
  };

  it(`keeps the ${ENTRIES_PER_APPLICATION} most recently used entries of an application`, async () => {
    const keys = await saveAged(cache, root, [
      ['app-many', 'v0'],
      ['app-many', 'v1'],
      ['app-many', 'v2'],
      ['app-many', 'v3'],
    ]);
    await cache.evict();
    const hits = [];
    for (const key of keys) hits.push((await cache.restore(key, await workspace(), owner)).hit);
    expect(hits).toEqual([false, true, true, true]);
  });

  it('keeps the whole cache under its byte limit, least recently used first', async () => {
    // Each entry here holds ~4.2 KB of files: two fit in 10 000 bytes, three do not.
    const dir = join(base, 'small-cache');
    const small = new DependencyCache({ root: dir, downloads: join(base, 'downloads'), masterKey, maxBytes: 10_000 });
    const keys = await saveAged(small, dir, [
      ['app-x1', 'x1'],
      ['app-x2', 'x2'],
      ['app-x3', 'x3'],
    ]);
    await small.evict();
    const hits = [];
    for (const key of keys) hits.push((await small.restore(key, await workspace(), owner)).hit);
    expect(hits).toEqual([false, true, true]);
    // An install larger than the whole cache is not stored at all.
    const big = await workspace('big');
    await writeFile(join(big, 'node_modules', 'big.bin'), randomBytes(20_000));
    expect(await small.save(await small.keyFor('app-big', big, 'package-lock.json', 'npm'), big)).toEqual({
      saved: false,
      reason: 'node_modules is larger than the cache allows (10000 bytes)',
    });
  });

  it('keeps each application under its own byte budget, so one application cannot push the others out', async () => {
    // ~4.2 KB per entry: one application may hold two (10 000 bytes), the whole cache 64 MiB.
    const dir = join(base, 'per-app-cache');
    const perApp = new DependencyCache({ root: dir, downloads: join(base, 'downloads'), masterKey, maxBytes: 64 * 1024 * 1024, appMaxBytes: 10_000 });
    // The victim's entry is the oldest of all; the greedy application then saves three newer ones.
    const keys = await saveAged(perApp, dir, [
      ['app-victim', 'v'],
      ['app-greedy', 'g1'],
      ['app-greedy', 'g2'],
      ['app-greedy', 'g3'],
    ]);
    await perApp.evict();
    const hits = [];
    for (const key of keys) hits.push((await perApp.restore(key, await workspace(), owner)).hit);
    expect(hits).toEqual([true, false, true, true]);
    // An install larger than one application's budget is not stored.
    const big = await workspace('big-app');
    await writeFile(join(big, 'node_modules', 'big.bin'), randomBytes(20_000));
    expect(await perApp.save(await perApp.keyFor('app-greedy', big, 'package-lock.json', 'npm'), big)).toEqual({
      saved: false,
      reason: 'node_modules is larger than the cache allows (10000 bytes)',
    });
  });

  it("a cache root that is a link, or not the worker's, is not used (and says why)", async () => {
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o755 });
    await symlink(elsewhere, join(base, 'linked-root'));
    const owned = join(base, 'build-user-root');
    await mkdir(owned, { mode: 0o700 });
    await run('chown', [`${owner.uid}:${owner.gid}`, owned]);
    for (const dir of [join(base, 'linked-root'), owned]) {
      const other = new DependencyCache({ root: dir, downloads: join(base, 'downloads'), masterKey, maxBytes: 1024 ** 2 });
      const ws = await workspace('unusable');
      const key = await other.keyFor('app-unusable', ws, 'package-lock.json', 'npm');
      // (The step log is the tenant's: it names the setting, not the host path.)
      const reason = "the dependency cache cannot be used: $BUILD_DIR/cache must be a directory owned by the worker's user";
      expect(await other.save(key, ws)).toEqual({ saved: false, reason });
      expect(await other.restore(key, await workspace(), owner)).toEqual({ hit: false, reason });
    }
    expect(await readdir(elsewhere)).toEqual([]);
    expect((await stat(elsewhere)).mode & 0o777).toBe(0o755);
  });

  it('eviction sweeps what is not an entry (older layouts, stale temporaries)', async () => {
    const { key } = await seed('app-sweep');
    await mkdir(join(root, 'app-sweep', 'modules', 'abc', 'node_modules'), { recursive: true });
    await mkdir(join(root, 'app-sweep', '.tmp-old'));
    const old = new Date(Date.now() - 2 * 3600_000);
    await utimes(join(root, 'app-sweep', '.tmp-old'), old, old);
    await cache.evict();
    expect((await readdir(join(root, 'app-sweep'))).sort()).toEqual([key.lockfileSha256]);
  });
});
