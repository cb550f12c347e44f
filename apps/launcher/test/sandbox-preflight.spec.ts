/**
 * `pnpm start` on a machine where the build sandbox cannot be made: the real built launcher, with a
 * `bwrap` on PATH that cannot create namespaces (what a kernel without unprivileged user
 * namespaces answers).
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type RunningProcess } from '@slipway/testing';
import { LAUNCHER, ROOT } from './support.js';

describe('pnpm start: build sandbox preflight', () => {
  let home: string;
  let fakeBin: string;
  let launcher: RunningProcess | undefined;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-home-'));
    fakeBin = await mkdtemp(join(tmpdir(), 'fake-bwrap-'));
    await chmod(fakeBin, 0o755);
    await writeFile(
      join(fakeBin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      { mode: 0o755 },
    );
  });
  afterEach(async () => {
    await launcher?.stop('SIGKILL');
    launcher = undefined;
    await rm(home, { recursive: true, force: true });
    await rm(fakeBin, { recursive: true, force: true });
  });

  it('stops before starting anything, with one line giving the command that fixes it', async () => {
    launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: {
        PATH: `${fakeBin}:${process.env['PATH']}`,
        HOME: process.env['HOME'],
        SLIPWAY_HOME: home,
        REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      },
    });
    const { code } = await launcher.exited;
    expect(code).toBe(1);
    const lines = launcher.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^slipway: cannot start: the build sandbox cannot be made on this machine: bwrap cannot create namespaces here \(bwrap: No permissions to create new namespace.*\): allow unprivileged user namespaces: `sysctl -w user\.max_user_namespaces=15000`.*; or set BUILD_SANDBOX=off/,
    );
    // Nothing was started: no master key, no embedded Postgres, no runtime file.
    expect(await readdir(home)).toEqual([]);
    expect(existsSync(join(home, 'runtime.json'))).toBe(false);
  }, 30_000);
});
