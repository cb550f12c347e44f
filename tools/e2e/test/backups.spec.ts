/**
 * Issue 31 against the platform as `pnpm start` runs it (embedded Postgres, the launcher's backup
 * service): end users signed up through the sign-in service, deleted through the application's
 * own database connection, brought back by a point-in-time restore and signing in with their
 * passwords; a damaged backup refused with nothing overwritten; the whole platform backed up,
 * restored into a fresh home and started again, serving the same app and the same users with the
 * same session cookies and JWT keys.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LaunchedPlatform, waitFor, type PlatformAccount } from '@slipway/testing';
import pg from 'pg';

const PASSWORD = 'a long passphrase';

interface RestoreView {
  id: string;
  status: string;
  databaseName: string | null;
  keptDatabase: string | null;
  error: string | null;
}

function launch(label: string, extra: { home?: string; ports?: LaunchedPlatform['ports'] } = {}): Promise<LaunchedPlatform> {
  return LaunchedPlatform.start(label, {
    suite: 'e2e',
    plan: 'pro',
    ...extra,
    // WAL files archived at least every 10 s (the default is 5 min), so the test waits little.
    env: (ports) => ({ AUTH_PUBLIC_URL: `http://127.0.0.1:${ports.auth}`, BACKUP_WAL_SECONDS: '10' }),
  });
}

async function authCall(platform: LaunchedPlatform, account: PlatformAccount, method: string, path: string, body?: unknown, cookie?: string) {
  const response = await fetch(`http://127.0.0.1:${platform.ports.auth}/a/${account.slug}${path}`, {
    method,
    headers: { origin: account.appUrl, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const cookies = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .filter((pair) => pair.split('=')[1]);
  return { status: response.status, text, cookie: cookies.join('; ') };
}

const signIn = (platform: LaunchedPlatform, account: PlatformAccount, email: string, password = PASSWORD) =>
  authCall(platform, account, 'POST', '/sign-in/email', { email, password });

/** The application's own DATABASE_URL as its app gets it: its role, through PgBouncer. */
async function appDatabaseUrl(platform: LaunchedPlatform, account: PlatformAccount): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${platform.ports.gateway}/dashboard/api/applications/${account.applicationId}/database/connection-string`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.ownerToken}` },
  });
  const { connectionString } = (await response.json()) as { connectionString: string };
  const url = new URL(connectionString);
  url.hostname = '127.0.0.1';
  url.port = String(platform.ports.pgbouncer);
  return url.toString();
}

async function onAppDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The CLI exited with `code`; its output in the failure otherwise. */
function exits(result: { code: number | null; stdout: string; stderr: string }, code: number): void {
  if (result.code !== code)
    throw new Error(`exit ${result.code}, expected ${code}\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(-3000)}`);
}

const owner = (account: PlatformAccount) => ({ SLIPWAY_TOKEN: account.ownerToken, SLIPWAY_APPLICATION_ID: account.applicationId });

function flipByteAt(bytes: Buffer, at: number): Buffer {
  const damaged = Buffer.from(bytes);
  damaged[at] = damaged[at]! ^ 0x5a;
  return damaged;
}

describe('backups and restore, as pnpm start runs them', () => {
  let platform: LaunchedPlatform;
  let account: PlatformAccount;
  let site: string;
  let sessionCookie = '';
  let restoreTime = '';
  const emails = ['ada@example.com', 'grace@example.com', 'linus@example.com'];

  beforeAll(async () => {
    platform = await launch('backups');
    account = await platform.bootstrap('owner@example.com', 'Backed Up');
    await platform.enableSignIn(account);
    site = await mkdtemp(join(tmpdir(), 'slipway-backups-site-'));
    await writeFile(join(site, 'index.html'), '<h1>still here after a restore</h1>\n');
    const task = await platform.deploy(account, site);
    expect(task.status).toBe('succeeded');
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
    if (site) await rm(site, { recursive: true, force: true });
  });

  it("users deleted through the application's own DATABASE_URL sign in again with their passwords after a point-in-time restore", async () => {
    // The backup service takes a base backup at start; the window opens once it finished.
    await waitFor(
      async () => {
        const listed = await platform.cli(['db', 'backups', '--json'], owner(account));
        return listed.code === 0 && JSON.parse(listed.stdout).pointInTime !== null;
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: 'the first base backup' },
    );
    for (const email of emails) expect((await platform.signUp(account, email)).status).toBe(200);
    const session = await signIn(platform, account, emails[0]!);
    expect(session.status).toBe(200);
    sessionCookie = session.cookie;
    expect(sessionCookie).toContain('session_token');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    restoreTime = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const url = await appDatabaseUrl(platform, account);
    const deleted = await onAppDatabase(url, async (client) => {
      await client.query('DELETE FROM service_auth.sessions');
      await client.query('DELETE FROM service_auth.accounts');
      return (await client.query('DELETE FROM service_auth.users')).rowCount;
    });
    expect(deleted).toBe(3);
    expect((await signIn(platform, account, emails[1]!)).status).toBe(401);

    // In place needs saying so.
    const refused = await platform.cli(['db', 'restore', '--to', restoreTime], owner(account));
    exits(refused, 2);
    expect(refused.stderr).toMatch(/--yes/);

    // A connection the app holds through PgBouncer during the restore (session pooling).
    const held = new pg.Client({ connectionString: url });
    held.on('error', () => undefined);
    await held.connect();
    expect((await held.query('SELECT count(*)::int AS n FROM service_auth.users')).rows[0].n).toBe(0);
    const restored = await platform.cli(['db', 'restore', '--to', restoreTime, '--yes', '--json'], owner(account), 300_000);
    exits(restored, 0);
    const restore = JSON.parse(restored.stdout) as RestoreView;
    // It was closed by the swap (not left on the database renamed aside); a new one reads the restored rows.
    await expect(held.query('SELECT 1')).rejects.toThrow();
    await held.end().catch(() => undefined);
    expect(restore).toMatchObject({ status: 'succeeded', error: null });
    expect(restore.keptDatabase).toMatch(/_before_/);

    for (const email of emails) expect((await signIn(platform, account, email)).status).toBe(200);
    expect((await signIn(platform, account, emails[0]!, 'not the passphrase')).status).toBe(401);
    // The session made before the delete is back too; the rows are where the app reads them.
    const current = await authCall(platform, account, 'GET', '/get-session', undefined, sessionCookie);
    expect(current.status).toBe(200);
    expect(JSON.parse(current.text)?.user?.email).toBe(emails[0]);
    expect(
      await onAppDatabase(url, async (client) => (await client.query('SELECT email FROM service_auth.users ORDER BY email')).rows.map((row) => row.email)),
    ).toEqual([...emails].sort());
    // The database it replaced is kept (with no users), beside the live one.
    const kept = await platform.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = $1', [restore.keptDatabase]);
    expect(kept).toHaveLength(1);
  }, 400_000);

  it('a restore from a damaged backup is refused and nothing is overwritten', async () => {
    const dir = join(platform.home, 'blobs', 'backups', 'base');
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.tar.gz.sealed'));
    const path = join(dir, file!);
    const original = await readFile(path);
    const before = await platform.query<{ datname: string }>('SELECT datname FROM pg_database ORDER BY datname');
    await writeFile(path, flipByteAt(original, Math.floor(original.length / 2)));
    try {
      const restored = await platform.cli(['db', 'restore', '--to', restoreTime, '--yes', '--json'], owner(account), 300_000);
      exits(restored, 1);
      const restore = JSON.parse(restored.stdout) as RestoreView;
      expect(restore.status).toBe('failed');
      expect(restore.error).toMatch(/damaged and was refused/);
      // Nothing replaced, nothing left behind: the same databases, the users still sign in.
      expect(await platform.query('SELECT datname FROM pg_database ORDER BY datname')).toEqual(before);
      expect((await signIn(platform, account, emails[2]!)).status).toBe(200);
      expect(platform.log()).toMatch(/backup +\| FAILED: restore .*damaged/);
    } finally {
      await writeFile(path, original);
    }
  }, 400_000);

  it('the whole platform, backed up and restored into a fresh home, serves the same app and signs in the same users with the same cookies and keys', async () => {
    const backupDir = await mkdtemp(join(tmpdir(), 'slipway-backups-file-'));
    const file = join(backupDir, 'platform.backup');
    const masterKey = await platform.masterKey();
    const jwksBefore = await authCall(platform, account, 'GET', '/jwks');
    expect(jwksBefore.status).toBe(200);
    const made = await platform.cli(['admin', 'backup', '--out', file, '--json'], {}, 300_000);
    exits(made, 0);
    const summary = JSON.parse(made.stdout) as { sizeBytes: number; applications: number; blobs: number };
    expect(summary.applications).toBe(1);
    expect(summary.blobs).toBeGreaterThan(0);
    expect(made.stderr).toMatch(/base backup/);
    const ports = platform.ports;

    // A damaged file: refused before anything is written.
    const damagedHome = await mkdtemp(join(tmpdir(), 'slipway-backups-damaged-'));
    const bytes = await readFile(file);
    await writeFile(`${file}.damaged`, flipByteAt(bytes, bytes.length - 100));
    const refused = await platform.cli(['admin', 'restore', `${file}.damaged`, '--home', damagedHome], { SLIPWAY_MASTER_KEY: masterKey }, 300_000);
    exits(refused, 1);
    expect(refused.stderr).toMatch(/damaged and was refused/);
    expect(existsSync(join(damagedHome, 'pg'))).toBe(false);
    expect(existsSync(join(damagedHome, 'master.key'))).toBe(false);
    // Without the master key it cannot even be opened.
    const keyless = await platform.cli(['admin', 'restore', file, '--home', damagedHome], {}, 60_000);
    exits(keyless, 2);
    expect(keyless.stderr).toMatch(/SLIPWAY_MASTER_KEY/);
    await rm(damagedHome, { recursive: true, force: true });

    // The old platform goes (its home with it); the new one takes its ports, as a restore on a new machine would take its addresses.
    await platform.stop();
    const home = await mkdtemp(join(tmpdir(), 'slipway-e2e-backups-restored-'));
    const restoredCli = await platform.cli(['admin', 'restore', file, '--home', home, '--json'], { SLIPWAY_MASTER_KEY: masterKey }, 300_000);
    exits(restoredCli, 0);
    expect(restoredCli.stderr).toMatch(/replaying/);
    // Over a home that holds a platform now: refused without --force.
    const again = await platform.cli(['admin', 'restore', file, '--home', home], { SLIPWAY_MASTER_KEY: masterKey }, 60_000);
    exits(again, 2);
    expect(again.stderr).toMatch(/already holds a platform/);

    platform = await launch('backups-restored', { home, ports });
    const served = await platform.viaEdge(account.slug, '/');
    expect(served.status).toBe(200);
    expect(served.body).toContain('still here after a restore');
    for (const email of emails) expect((await signIn(platform, account, email)).status).toBe(200);
    const current = await authCall(platform, account, 'GET', '/get-session', undefined, sessionCookie);
    expect(current.status).toBe(200);
    expect(JSON.parse(current.text)?.user?.email).toBe(emails[0]);
    const jwksAfter = await authCall(platform, account, 'GET', '/jwks');
    expect(JSON.parse(jwksAfter.text)).toEqual(JSON.parse(jwksBefore.text));
    // The restored platform backs itself up on its own from the start.
    await waitFor(async () => (await platform.query("SELECT 1 FROM backups WHERE kind = 'base' AND status = 'succeeded'")).length > 0, {
      timeoutMs: 120_000,
      intervalMs: 1000,
      what: "the restored platform's first base backup",
    });
    await rm(backupDir, { recursive: true, force: true });
  }, 600_000);
});
