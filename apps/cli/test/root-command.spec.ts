import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@slipway/testing';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs a command as a user types it at the repo root; stdout and stderr kept apart. */
function sh(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('`pnpm slipway … --json` at the repo root', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('cli-root');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('prints only the JSON object on stdout: pnpm and Nx say nothing there', async () => {
    const env = { PATH: process.env['PATH'], HOME: process.env['HOME'], DATABASE_URL: db.url, SLIPWAY_HOME: '/nonexistent', NX_DAEMON: 'false', CI: 'true' };
    const { code, stdout, stderr } = await sh('pnpm', ['slipway', 'admin', 'bootstrap', '--email', 'root@example.com', '--app', 'Root Check', '--json'], env);
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.startsWith('{')).toBe(true);
    expect(JSON.parse(stdout)).toMatchObject({ slug: 'root-check', apiKey: expect.stringMatching(/^slw_key_/) });
    expect(stdout.trim().split('\n')).toHaveLength(1);
  }, 180_000);
});
