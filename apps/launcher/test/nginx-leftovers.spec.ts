import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, freePort, waitFor } from '@slipway/testing';
import { nginxStateDir, stopLeftoverNginx } from '../src/nginx-leftovers.js';

/** A real nginx master (detached, its own group) on `<dir>/nginx.conf`, as the runtime supervisor's keeper starts it. */
async function startNginx(dir: string): Promise<{ child: ChildProcess; pid: number }> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  await writeFile(
    join(dir, 'nginx.conf'),
    `worker_processes 2;\npid ${join(dir, 'nginx.pid')};\nerror_log stderr error;\nevents {}\nhttp { access_log off; client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi; server { listen 127.0.0.1:${port}; return 200; } }\n`,
  );
  const child = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore', detached: true });
  const pid = await waitFor(async () => Number((await readFile(join(dir, 'nginx.pid'), 'utf8').catch(() => '')).trim()) || undefined, {
    timeoutMs: 10_000,
    what: 'nginx to write its pid file',
  });
  return { child, pid };
}

describe('stopLeftoverNginx', () => {
  let home: string;
  const started: ChildProcess[] = [];
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-nginx-leftovers-'));
  });
  afterEach(async () => {
    for (const child of started.splice(0)) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await rm(home, { recursive: true, force: true });
  });

  it('stops the nginx of this home that no supervisor keeps any more, workers included', async () => {
    const { child, pid } = await startNginx(nginxStateDir(home, {}));
    started.push(child);
    await stopLeftoverNginx(home, 3_000);
    await waitFor(() => !alive(pid), { timeoutMs: 5_000, what: 'the master to be gone' });
    // No worker of its group is left (they would hold the edge's port).
    const groupGone = await waitFor(
      () => {
        try {
          process.kill(-pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 5_000, what: 'its workers to be gone' },
    );
    expect(groupGone).toBe(true);
    expect(alive(pid)).toBe(false);
  });

  it("leaves alone an nginx of another state directory, even if this home's pid file names it", async () => {
    const other = await startNginx(join(home, 'elsewhere'));
    started.push(other.child);
    await mkdir(nginxStateDir(home, {}), { recursive: true });
    await writeFile(join(nginxStateDir(home, {}), 'nginx.pid'), `${other.pid}\n`);
    await stopLeftoverNginx(home, 1_000);
    expect(alive(other.pid)).toBe(true);
  });
});
