import { randomBytes } from 'node:crypto';
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '@slipway/testing';
import { projectFixture, SENT } from './support/fixture.js';
import { ANSI, CLI_MAIN, startPlatform, storedSource, type PlatformUnderTest } from './support/platform.js';
import { advanceTask, latestTaskId, stepsUpTo } from './support/worker-sim.js';

/*
 * The built `slipway` binary against the built gateway process (real HTTP, Postgres, Redis).
 * There is no build worker on this branch: where a test needs a task to progress, it moves the
 * deployment row on with SQL exactly as the worker would (support/worker-sim.ts).
 */
describe('slipway deploy / status (real binary, real gateway)', () => {
  let platform: PlatformUnderTest;
  const dirs: string[] = [];
  const fixture = async (extra?: Record<string, string>) => {
    const dir = await projectFixture(extra);
    dirs.push(dir);
    return dir;
  };
  beforeAll(async () => {
    platform = await startPlatform('cli-deploy');
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('uploads the folder without ignored files (checked in the stored source) and prints one JSON document with --no-wait', async () => {
    const app = await platform.bootstrap('Ignore Rules');
    const dir = await fixture();
    const result = await platform.cli(['deploy', dir, '--no-wait'], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toEqual({ taskId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'queued', files: SENT.length, bytes: expect.any(Number) });

    const stored = await storedSource(platform.blobDir, out.taskId);
    expect([...stored.keys()].sort()).toEqual(SENT);
    expect(stored.get('run.sh')).toEqual({ mode: 0o755, content: '#!/bin/sh\necho hi\n' });
    expect(stored.get('index.html')).toEqual({ mode: 0o644, content: '<h1>hello</h1>' });
    const row = await platform.sql.query('SELECT application_id, status FROM deployments WHERE id = $1', [out.taskId]);
    expect(row.rows).toEqual([{ application_id: app.applicationId, status: 'queued' }]);
  });

  it('sends an excluded file only when --include names it; takes the key from .slipway.json and never sends that file', async () => {
    const app = await platform.bootstrap('Include');
    const dir = await fixture({ '.slipway.json': JSON.stringify({ apiKey: app.apiKey, url: platform.url }) });
    const result = await platform.cli(['deploy', '--no-wait', '--include', '.env.production', '--include', 'node_modules/left-pad/'], {
      env: { PATH: process.env['PATH'] },
      cwd: dir,
    });
    expect(result.code).toBe(0);
    const names = [...(await storedSource(platform.blobDir, JSON.parse(result.stdout).taskId)).keys()].sort();
    expect(names).toEqual([...SENT, '.env.production', 'node_modules/left-pad/index.js'].sort());
    expect(names).not.toContain('.env');
  });

  it('--root-directory sends the rootDirectory field with the whole folder (production and preview); a bad value is refused before any upload', async () => {
    const app = await platform.bootstrap('Monorepo');
    const dir = await fixture({ 'apps/web/index.html': '<h1>web</h1>' });
    const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
    const rootDirectoryOf = async (taskId: string) =>
      (await platform.sql.query('SELECT root_directory FROM deployments WHERE id = $1', [taskId])).rows[0]?.root_directory;

    const result = await platform.cli(['deploy', dir, '--root-directory', 'apps/web/', '--no-wait'], { env });
    expect([result.code, result.stderr]).toEqual([0, '']);
    const { taskId } = JSON.parse(result.stdout);
    // Trimmed of its trailing slash, as the platform keeps it; the folder is sent whole, not cut to it.
    expect(await rootDirectoryOf(taskId)).toBe('apps/web');
    expect([...(await storedSource(platform.blobDir, taskId)).keys()].sort()).toEqual([...SENT, 'apps/web/index.html'].sort());
    await platform.sql.query(`UPDATE deployments SET status = 'succeeded', finished_at = now() WHERE id = $1`, [taskId]);

    const preview = await platform.cli(['deploy', dir, '--preview=web', '--root-directory=apps/web', '--no-wait'], { env });
    expect([preview.code, preview.stderr]).toEqual([0, '']);
    expect(await rootDirectoryOf(JSON.parse(preview.stdout).taskId)).toBe('apps/web');

    const before = (await platform.sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n;
    for (const [value, problem] of [
      ['../web', 'has a ".." segment'],
      ['/srv/web', 'is absolute'],
      ['apps/w\u001b[2Jeb', 'may hold only letters'],
    ]) {
      const refused = await platform.cli(['deploy', dir, '--root-directory', value!, '--no-wait'], { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(new RegExp(`^slipway: --root-directory ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\n\u001b]*\n$`));
    }
    expect((await platform.sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n).toBe(before);

    const help = await platform.cli(['deploy', '--help'], { env });
    expect(help.stdout).toContain('--root-directory <dir>');
  });

  it('waits for the task: exit 0 on succeeded, the final task as JSON with url, warnings and hazards', async () => {
    const app = await platform.bootstrap('Succeeds');
    const dir = await fixture();
    const running = platform.spawnCli(['deploy', dir, '--json'], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    const taskId = await waitForTask(app.applicationId);
    await advanceTask(platform.sql, taskId, { status: 'building', steps: stepsUpTo(2, { status: 'running' }) });
    const warnings = [{ code: 'node_version_unpinned', message: 'No engines.node in package.json; Node 20 was used.' }];
    const hazards = [{ code: 'secret_in_source', message: 'A private key was found in src/key.pem.', severity: 'high', file: 'src/key.pem' }];
    await advanceTask(platform.sql, taskId, { status: 'succeeded', steps: stepsUpTo(7), warnings, hazards });
    const result = await running.done;
    expect(result.code).toBe(0);
    const task = JSON.parse(result.stdout);
    expect(task).toMatchObject({ taskId, status: 'succeeded', url: `http://${app.slug}.localhost:8080`, warnings, hazards });
    expect(task.steps.map((s: { status: string }) => s.status)).toEqual(Array(7).fill('succeeded'));
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('exit 1 on failed, with the reason and the failing step’s log tail on stderr', async () => {
    const app = await platform.bootstrap('Fails');
    const dir = await fixture();
    const running = platform.spawnCli(['deploy', dir], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    const taskId = await waitForTask(app.applicationId);
    const log = Array.from({ length: 40 }, (_, i) => `build line ${i + 1}`).join('\n') + '\nError: Cannot find module "vite"\n';
    await advanceTask(platform.sql, taskId, {
      status: 'failed',
      steps: stepsUpTo(3, { status: 'failed', log }),
      error: { code: 'build_failed', message: 'npm run build exited with code 1', step: 'build' },
    });
    const result = await running.done;
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ taskId, status: 'failed', error: { code: 'build_failed', step: 'build' } });
    expect(result.stderr).toContain('slipway: Deploy failed at build: build_failed: npm run build exited with code 1');
    expect(result.stderr).toContain('Last lines of the build log:');
    expect(result.stderr).toContain('  Error: Cannot find module "vite"');
    expect(result.stderr).toContain('build line 40');
    expect(result.stderr).not.toContain('build line 5\n');
  });

  it('Ctrl-C stops following, not the deploy: exit 130 with how to follow it again', async () => {
    const app = await platform.bootstrap('Interrupted');
    const running = platform.spawnCli(['deploy', await fixture()], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    const taskId = await waitForTask(app.applicationId);
    await waitForStderr(running, `slipway: following task ${taskId}`);
    running.signal('SIGINT');
    const result = await running.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toBe(
      `slipway: following task ${taskId} until it succeeds or fails\nslipway: stopped following; the deploy goes on. Follow it again with: slipway status ${taskId} --wait\n`,
    );
    expect((await platform.sql.query('SELECT status FROM deployments WHERE id = $1', [taskId])).rows[0].status).toBe('queued');
  });

  it('409 deploy_in_progress: one coded line and a hint, exit 1; --follow follows the running task instead', async () => {
    const app = await platform.bootstrap('Busy');
    const dir = await fixture();
    const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
    const first = JSON.parse((await platform.cli(['deploy', dir, '--no-wait'], { env })).stdout);

    const refused = await platform.cli(['deploy', dir], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `slipway: deploy_in_progress: A deploy of this application is already queued, building or releasing; poll it or wait for it to finish.\n  follow it with: slipway deploy --follow, or slipway status ${first.taskId} --wait\n`,
    );
    expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'deploy_in_progress', status: 409, taskId: first.taskId });

    const following = platform.spawnCli(['deploy', dir, '--follow'], { env });
    await waitForStderr(following, `slipway: following task ${first.taskId} until it succeeds or fails`);
    await advanceTask(platform.sql, first.taskId, { status: 'succeeded', steps: stepsUpTo(7) });
    const followed = await following.done;
    expect(followed.code).toBe(0);
    expect(JSON.parse(followed.stdout)).toMatchObject({ taskId: first.taskId, status: 'succeeded' });
    const count = await platform.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [app.applicationId]);
    expect(count.rows[0].n).toBe(1);
  });

  it('429 rate_limited: says when to retry, exit 1', async () => {
    const app = await platform.bootstrap('Limited');
    await platform.sql.query(
      `INSERT INTO deployments (application_id, status, created_at) SELECT $1, 'succeeded', now() - interval '30 minutes' + (n || ' seconds')::interval FROM generate_series(1, 20) n`,
      [app.applicationId],
    );
    const result = await platform.cli(['deploy', await fixture()], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    expect(result.code).toBe(1);
    const [line, hint] = result.stderr.split('\n');
    expect(line).toMatch(/^slipway: rate_limited: This application has had 20 deploys in the last hour; try again in \d+ seconds\.$/);
    expect(hint).toMatch(/^ {2}retry after .+ \(in (29|30)m \d\ds\)$/);
    expect(JSON.parse(result.stdout)).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: expect.any(Number) });
  });

  it('sends an in-tree link as a link (stored as one); refuses a folder with a link out before sending anything, exit 2', async () => {
    const app = await platform.bootstrap('Links');
    const dir = await fixture({ 'AGENTS.md': '# agents' });
    await symlink('AGENTS.md', join(dir, 'CLAUDE.md'));
    const sent = await platform.cli(['deploy', dir, '--no-wait'], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    expect([sent.code, sent.stderr]).toEqual([0, '']);
    const stored = await storedSource(platform.blobDir, JSON.parse(sent.stdout).taskId);
    expect(stored.get('CLAUDE.md')).toEqual({ mode: 0o777, content: '', linkname: 'AGENTS.md' });
    expect(stored.get('AGENTS.md')).toEqual({ mode: 0o644, content: '# agents' });

    const other = await platform.bootstrap('Link Out');
    const out = await fixture();
    await symlink('../../../etc/hosts', join(out, 'hosts'));
    const refused = await platform.cli(['deploy', out, '--no-wait'], { env: platform.cliEnv({ SLIPWAY_API_KEY: other.apiKey }) });
    expect(refused).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        'slipway: a symbolic link cannot be sent: Slipway keeps links only when they stay inside the project folder\n' +
        '  hosts -> ../../../etc/hosts: leads outside the project\n' +
        'Replace such a link with a copy of what it points to, or leave it out with .slipwayignore.\n',
    });
    const rows = await platform.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [other.applicationId]);
    expect(rows.rows[0].n).toBe(0);
  });

  it('exit 2 on authentication and usage errors, one readable line each; --verbose adds details', async () => {
    const dir = await fixture();
    const bad = await platform.cli(['deploy', dir], { env: platform.cliEnv({ SLIPWAY_API_KEY: 'slw_key_nope' }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^slipway: unauthorized: [^\n]+\n$/);

    const verbose = await platform.cli(['deploy', dir, '--verbose'], { env: platform.cliEnv({ SLIPWAY_API_KEY: 'slw_key_nope' }) });
    expect(verbose.stderr).toContain('  HTTP 401\n');
    expect(verbose.stderr).toMatch(/ {2}documentation: http\S+#error-unauthorized/);

    const noKey = await platform.cli(['deploy', dir], { env: platform.cliEnv() });
    expect(noKey).toMatchObject({ code: 2, stderr: 'slipway: no API key: pass --api-key, set SLIPWAY_API_KEY, or put "apiKey" in .slipway.json\n' });
    const unknownFlag = await platform.cli(['deploy', dir, '--wat'], { env: platform.cliEnv() });
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/^slipway: Unknown option '--wat'/);
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await platform.cli(['deploy', dir], { env: platform.cliEnv({ SLIPWAY_API_KEY: 'slw_key_x', SLIPWAY_URL: nobody }) });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`slipway: cannot reach the platform at ${nobody} (ECONNREFUSED); is it running? Set --url or SLIPWAY_URL\n`);
  });

  it('status <taskId>: the task as JSON (exit 0 while it runs), not_found for a stranger’s task', async () => {
    const app = await platform.bootstrap('Status');
    const other = await platform.bootstrap('Status Other');
    const dir = await fixture();
    const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
    const { taskId } = JSON.parse((await platform.cli(['deploy', dir, '--no-wait'], { env })).stdout);
    const status = await platform.cli(['status', taskId], { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ taskId, status: 'queued', warnings: [], hazards: [] });
    const stranger = await platform.cli(['status', taskId], { env: platform.cliEnv({ SLIPWAY_API_KEY: other.apiKey }) });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/^slipway: not_found: No deployment task /);
  });

  describe('on a terminal (pty via `script`)', () => {
    const ansi = ANSI;
    /** What stays on the screen: a live line is erased (CR + ESC[2K) before it is redrawn or settled. */
    const screen = (raw: string) =>
      raw
        .split('\n')
        .map((line) =>
          line
            .slice(line.lastIndexOf('\x1b[2K') + 1)
            .replace(/^\[2K/, '')
            .replace(/\r/g, '')
            .replace(ansi, ''),
        )
        .join('\n');
    const inPty = (args: string[], env: NodeJS.ProcessEnv) =>
      platform.spawnCli([], {
        env: { ...env, TERM: 'xterm-256color' },
        command: ['script', '-q', '-e', '-c', ['node', CLI_MAIN, ...args].join(' '), '/dev/null'],
      });

    it('shows the upload progress bar, each step live with its duration, severity-coloured findings and the URL', async () => {
      const app = await platform.bootstrap('Terminal');
      const dir = await fixture({ 'assets/big.bin': randomBytes(768 * 1024).toString('base64') });
      const running = inPty(['deploy', dir], platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }));
      const taskId = await waitForTask(app.applicationId);
      await advanceTask(platform.sql, taskId, { status: 'building', steps: stepsUpTo(2, { status: 'running' }) });
      await waitForStdout(running, '✓ analyze');
      expect(running.output().stdout.replace(ansi, '')).toMatch(/⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏/);
      await advanceTask(platform.sql, taskId, {
        status: 'succeeded',
        steps: stepsUpTo(7),
        warnings: [{ code: 'node_version_unpinned', message: 'No engines.node in package.json; Node 20 was used.' }],
        hazards: [{ code: 'secret_in_source', message: 'A private key was found.', severity: 'high', file: 'src/key.pem' }],
      });
      const result = await running.done;
      expect(result.code).toBe(0);
      const raw = result.stdout;
      expect(raw.replace(ansi, '')).toMatch(/\rUploading ░{24} +0% {2}0 B of 1\.0 MB · 0 B sent/);
      expect(raw.replace(ansi, '')).toMatch(/\rUploading █{24} 100% {2}1\.0 MB of 1\.0 MB · \d+\.\d KB sent/);
      const text = screen(raw);
      expect(text).toMatch(/✓ Uploaded 8 files, 1\.0 MB \(\d/);
      expect(text).toContain(`Deploying (task ${taskId})`);
      expect(text).toMatch(/✓ receive +1\.0s\n✓ analyze +1\.1s\n✓ install +1\.2s\n✓ build +1\.3s\n✓ scan +1\.4s\n✓ package +1\.5s\n✓ release +1\.6s\n/);
      expect(text).toContain('Warnings (1)\n  ⚠ node_version_unpinned: No engines.node in package.json; Node 20 was used.\n');
      expect(text).toContain('Hazards (1)\n  ▲ high secret_in_source: A private key was found.\n      file: src/key.pem\n');
      expect(text).toContain(`✓ Deployed (task ${taskId}): http://${app.slug}.localhost:8080`);
      expect(raw).toContain('\x1b[31m▲ high\x1b[39m');
      expect(raw).toContain('\x1b[33m⚠\x1b[39m');
    });

    it('409 on a terminal: asks whether to follow the running deploy; Enter follows it', async () => {
      const app = await platform.bootstrap('Terminal Busy');
      const dir = await fixture();
      const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
      const first = JSON.parse((await platform.cli(['deploy', dir, '--no-wait'], { env })).stdout);
      const running = inPty(['deploy', dir], env);
      await waitForStdout(running, `A deploy of this application is already running (task ${first.taskId}). Follow it? [Y/n]`);
      running.write('\r');
      await waitForStdout(running, `Following the running deploy (task ${first.taskId})`);
      await advanceTask(platform.sql, first.taskId, { status: 'succeeded', steps: stepsUpTo(7) });
      const result = await running.done;
      expect(result.code).toBe(0);
      expect(screen(result.stdout)).toContain(`✓ Deployed (task ${first.taskId}): http://${app.slug}.localhost:8080`);
    });

    it('on failure prints the failing step and its log tail, exit 1', async () => {
      const app = await platform.bootstrap('Terminal Fails');
      const running = inPty(['deploy', await fixture()], platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }));
      const taskId = await waitForTask(app.applicationId);
      await advanceTask(platform.sql, taskId, {
        status: 'failed',
        steps: stepsUpTo(2, { status: 'failed', log: 'npm ERR! code ERESOLVE\nnpm ERR! could not resolve react@19\n' }),
        error: { code: 'install_failed', message: 'npm ci exited with code 1', step: 'install' },
      });
      const result = await running.done;
      expect(result.code).toBe(1);
      const text = screen(result.stdout);
      expect(text).toMatch(/✓ analyze +1\.1s\n✗ install +1\.2s\n/);
      expect(text).toContain(
        `✗ Deploy failed at install: install_failed: npm ci exited with code 1 (task ${taskId})\n\nLast lines of the install log:\n  npm ERR! code ERESOLVE\n  npm ERR! could not resolve react@19\n`,
      );
    });
  });

  async function waitForStdout(running: { output(): { stdout: string } }, text: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!running.output().stdout.replace(ANSI, '').includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" on stdout: ${running.output().stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function waitForTask(applicationId: string): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const id = await latestTaskId(platform.sql, applicationId);
      if (id) return id;
      if (Date.now() > deadline) throw new Error('the CLI never created a deployment');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function waitForStderr(running: { output(): { stderr: string } }, text: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!running.output().stderr.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" on stderr: ${running.output().stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});
