import { jest } from '@jest/globals';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DeployHarness, type DeploymentRow } from '@slipway/testing';

/** One file of a gzipped tar (the release artifact: what the edge serves). */
function tarFile(gz: Buffer, wanted: string): string | null {
  const tar = gunzipSync(gz);
  for (let offset = 0; offset + 512 <= tar.length;) {
    const header = tar.subarray(offset, offset + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(header.subarray(124, 136).toString('utf8').trim() || '0', 8);
    if (name === wanted) return tar.subarray(offset + 512, offset + 512 + size).toString('utf8');
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return null;
}

const GENUINE_TITLE = 'Vite &lt;style&gt; SPA';

describe('dependency cache end to end (real worker, sandboxed npm ci, hostile tenant)', () => {
  // Each deploy runs a real `npm ci` in bubblewrap; on a shared 2-core machine that is 5–20 s.
  jest.setTimeout(240_000);
  let h: DeployHarness;
  let cacheRoot: string;

  const install = (row: DeploymentRow) => row.steps.find((s) => s.name === 'install')!.log;
  const servedIndex = async (deploymentId: string) => {
    const { artifact_key: key } = (await h.pg.query(`SELECT artifact_key FROM releases WHERE deployment_id = $1`, [deploymentId])).rows[0];
    return tarFile(Buffer.concat((await (await h.blobs.get(key)).toArray()) as Buffer[]), 'index.html');
  };
  const deployVictim = async (applicationId: string) => {
    const id = await h.deployFixture(applicationId, 'vite-spa');
    const row = await h.waitForFinal(id);
    expect(row).toMatchObject({ status: 'succeeded', error: null });
    return { row, index: await servedIndex(id) };
  };
  /** `<cache>/<app>/<lockfile sha256>/<toolchain>`, the one entry of the application. */
  const entryOf = async (applicationId: string) => {
    const [lock] = await readdir(join(cacheRoot, applicationId));
    const [toolchain] = await readdir(join(cacheRoot, applicationId, lock!));
    return join(cacheRoot, applicationId, lock!, toolchain!);
  };

  beforeAll(async () => {
    h = await DeployHarness.create('worker-depcache');
    cacheRoot = join(h.home, 'build', 'cache');
    await h.startWorker();
  }, 60_000);
  afterAll(async () => {
    await h.close();
  });

  it("a tenant's install and build can neither see nor write the cache; the victim's next deploy restores its own code", async () => {
    const victim = await h.createApplication();
    const first = await deployVictim(victim);
    expect(install(first.row)).toMatch(/\$ npm ci[\s\S]*dependencies cached \(\d+ files/);
    expect(first.index).toContain(GENUINE_TITLE);
    const entry = await entryOf(victim);
    const victimFile = join(entry, 'tree', 'escape-html', 'index.js');
    const downloads = join(h.home, 'build', 'downloads');
    const genuine = await readFile(victimFile);

    // The attacker knows the platform's layout and the victim's id, and tries from every script it controls.
    const probe = [
      'phase=$1',
      'try() { if sh -c "$1" >/dev/null 2>&1; then echo "PROBE $phase ALLOWED: $1"; else echo "PROBE $phase refused: $1"; fi; }',
      ...[
        `ls ${cacheRoot}`,
        `ls ${join(cacheRoot, victim)}`,
        `cat ${victimFile}`,
        `echo "module.exports = () => 'pwned'" > ${victimFile}`,
        `mkdir ${join(cacheRoot, victim, 'x')}`,
        `ls /cache/${victim}`,
        `ls /cache/../${victim}`,
        `ls ${downloads}`,
        `touch ${join(downloads, victim, 'x')}`,
      ].map((command) => `try '${command.replaceAll("'", "'\\''")}'`),
      `find / -path /proc -prune -o -name '${victim}*' -print 2>/dev/null | sed "s/^/PROBE $phase FOUND /"`,
      'echo "PROBE $phase done"',
    ].join('\n');
    const pkg = {
      name: 'attacker',
      private: true,
      version: '1.0.0',
      type: 'module',
      scripts: { preinstall: 'sh probe.sh install', build: 'sh probe.sh build && node build.mjs' },
      dependencies: { 'escape-html': '1.0.3' },
    };
    const fixture = join(import.meta.dirname, '..', '..', '..', 'libs', 'analyzer', 'fixtures', 'vite-spa');
    const lock = await readFile(join(fixture, 'package-lock.json'), 'utf8');
    const attacker = await h.createApplication();
    const id = await h.deployFixture(attacker, 'vite-spa', {
      'probe.sh': probe,
      'package.json': JSON.stringify(pkg),
      'package-lock.json': lock.replace('vite-style-spa', 'attacker'),
    });
    const attack = await h.waitForFinal(id);
    expect(attack).toMatchObject({ status: 'succeeded', error: null });
    const build = attack.steps.find((s) => s.name === 'build')!.log;
    expect(build).toContain('PROBE build done');
    expect(build).not.toMatch(/PROBE build (ALLOWED|FOUND)/);
    expect(build.match(/PROBE build refused/g)).toHaveLength(9);
    expect(install(attack)).toContain('PROBE install done');
    expect(install(attack)).not.toMatch(/PROBE install (ALLOWED|FOUND)/);
    // (The harness's home is under /tmp, which is the sandbox's own tmpfs: check the host too.)
    expect(await readFile(victimFile)).toEqual(genuine);
    expect(await readdir(join(cacheRoot, victim))).toEqual([basename(join(entry, '..'))]);

    const second = await deployVictim(victim);
    expect(install(second.row)).toMatch(/dependencies restored from the cache \(lockfile package-lock\.json unchanged, \d+ files verified in \d+ ms\)/);
    expect(install(second.row)).not.toContain('$ npm ci');
    expect(second.index).toContain(GENUINE_TITLE);
  });

  it('an entry tampered with on disk is discarded with the reason, the install runs afresh, and the victim serves its own code', async () => {
    const victim = await h.createApplication();
    await deployVictim(victim);
    // A bug, a restored backup, a shared volume: the bytes on disk change without the platform.
    const file = join(await entryOf(victim), 'tree', 'escape-html', 'index.js');
    // Same size as the genuine file, so only its digest can tell.
    const size = (await readFile(file)).length;
    await writeFile(file, "module.exports = function () { return 'PWNED-BY-CACHE'; };\n".padEnd(size, ' '));

    const second = await deployVictim(victim);
    expect(second.index).not.toContain('PWNED');
    expect(second.index).toContain(GENUINE_TITLE);
    expect(install(second.row)).toContain(
      'the cached dependencies were discarded: node_modules/escape-html/index.js does not match its digest in the manifest',
    );
    expect(install(second.row)).toMatch(/installing afresh[\s\S]*\$ npm ci[\s\S]*dependencies cached/);

    const third = await deployVictim(victim);
    expect(install(third.row)).toContain('dependencies restored from the cache');
    expect(third.index).toContain(GENUINE_TITLE);
  });

  it('builds that run unsandboxed neither use nor fill the cache', async () => {
    await h.stopWorkers();
    await h.startWorker({ BUILD_SANDBOX: 'off' });
    const app = await h.createApplication();
    for (let i = 0; i < 2; i++) {
      const { row } = await deployVictim(app);
      expect(install(row)).toContain('$ npm ci');
      expect(install(row)).not.toMatch(/restored from the cache|dependencies cached/);
    }
    expect(await readdir(join(cacheRoot, app)).catch(() => [])).toEqual([]);
  });
});
