import { fileURLToPath } from 'node:url';
import { freePort, startProcess, waitFor, type RunningProcess } from '@slipway/testing';
import { TenantsService } from '../src/tenants/tenants.service.js';
import type { TenantDb } from '../src/tenants/tenant.js';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const TRIGGERS = ['sessions_updated', 'sessions_deleted']
  .map((t) => `service_auth.sessions ${t}`)
  .concat(['users_updated', 'users_deleted'].map((t) => `service_auth.users ${t}`));

/**
 * Two real auth-service processes (separate ports) over the same platform database, tenant
 * database and Redis prefix. Every scenario warms replica B's session cache, changes something
 * through replica A, and reads through B at once: B must answer with the new state. The
 * database's change notifications (triggers) are switched off for these, so only A's Redis
 * invalidation (publish, wait for every replica's acknowledgement) can make B see the change;
 * the last test switches them on and checks a change made by someone else.
 */
describe('session cache across two replicas (real processes, Postgres, Redis)', () => {
  let h: AuthHarness;
  let db: TenantDb;
  const replicas: { url: string; process: RunningProcess }[] = [];
  let a: string;
  let b: string;
  const slug = 'twins';

  async function startReplica(): Promise<{ url: string; process: RunningProcess }> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      DATABASE_URL: h.config.DATABASE_URL,
      REDIS_URL: h.config.REDIS_URL,
      SLIPWAY_MASTER_KEY: h.config.SLIPWAY_MASTER_KEY,
      AUTH_REDIS_PREFIX: h.config.AUTH_REDIS_PREFIX,
      AUTH_PUBLIC_URL: h.url,
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '1000',
      AUTH_TENANT_CACHE_SECONDS: '0',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };
    const running = startProcess(process.execPath, [MAIN], { env });
    await waitFor(async () => (await fetch(`${url}/health/ready`)).ok, { timeoutMs: 30_000, what: `replica on ${port} to be ready` });
    return { url, process: running };
  }

  /** A browser holding `from`'s cookies, talking to replica `base`. */
  function on(base: string, from: TestClient): TestClient {
    const client = new TestClient(`${base}/a/${slug}`, originOf(slug));
    for (const [k, v] of from.cookies) client.cookies.set(k, v);
    return client;
  }

  /** Reads the session through B until B's cache holds it (its LISTEN and heartbeat are up after the first reads). */
  async function warm(client: TestClient): Promise<{ session: { id: string; token: string }; user: { name: string } }> {
    let body: { session: { id: string; token: string }; user: { name: string } } | null = null;
    for (let i = 0; i < 3; i++) {
      body = await (await client.get('/get-session')).json();
      expect(body).not.toBeNull();
      await new Promise((r) => setTimeout(r, 30));
    }
    return body!;
  }

  beforeAll(async () => {
    h = await startAuthHarness('authreplicas');
    await h.createTenant(slug);
    replicas.push(await startReplica(), await startReplica());
    [a, b] = replicas.map((r) => r.url) as [string, string];
    db = h.app.get(TenantsService).db(await h.app.get(TenantsService).resolve(slug));
    // Opens B's change listener for the tenant before the scenarios.
    const first = new TestClient(`${a}/a/${slug}`, originOf(slug));
    expect((await first.signUp('first@example.com')).status).toBe(200);
    await warm(on(b, first));
    await new Promise((r) => setTimeout(r, 300));
    for (const t of TRIGGERS) await db.query(`ALTER TABLE ${t.split(' ')[0]} DISABLE TRIGGER ${t.split(' ')[1]}`);
  }, 60_000);

  afterAll(async () => {
    for (const r of replicas) await r.process.stop();
    await h?.close();
  });

  it('B really answers from its cache (a change the database does not announce stays unseen there)', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('cached@example.com', 'correct horse battery', 'Before');
    const viaB = on(b, alice);
    const { user } = await warm(viaB);
    expect(user.name).toBe('Before');
    // Behind the cache's back: triggers off, no invalidation.
    await db.query(`UPDATE service_auth.users SET name = 'Unannounced' WHERE email = 'cached@example.com'`);
    expect((await (await viaB.get('/get-session')).json()).user.name).toBe('Before');
    // A (cold for this session) reads the database.
    expect((await (await on(a, alice).get('/get-session')).json()).user.name).toBe('Unannounced');
  });

  it('sign-out through A: B answers null at once', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('signout@example.com');
    const viaB = on(b, alice);
    await warm(viaB);
    expect((await alice.post('/sign-out')).status).toBe(200);
    expect(await (await viaB.get('/get-session')).json()).toBeNull();
    expect((await viaB.get('/token')).status).toBe(401);
  });

  it('revoke-session through A: B refuses the revoked session at once', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('revoke@example.com');
    const other = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await other.signIn('revoke@example.com');
    const otherViaB = on(b, other);
    const { session } = await warm(otherViaB);
    expect((await alice.post('/revoke-session', { token: session.token })).status).toBe(200);
    expect(await (await otherViaB.get('/get-session')).json()).toBeNull();
    expect((await otherViaB.get('/token')).status).toBe(401);
    expect(await (await on(b, alice).get('/get-session')).json()).not.toBeNull();
  });

  it('revoke-other-sessions through A: B refuses the other sessions at once, keeps the current one', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('others@example.com');
    const other = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await other.signIn('others@example.com');
    const otherViaB = on(b, other);
    const aliceViaB = on(b, alice);
    await warm(otherViaB);
    await warm(aliceViaB);
    expect((await alice.post('/revoke-other-sessions')).status).toBe(200);
    expect(await (await otherViaB.get('/get-session')).json()).toBeNull();
    expect(await (await aliceViaB.get('/get-session')).json()).not.toBeNull();
  });

  it('revoke-sessions through A: B refuses every session of the user at once', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('all@example.com');
    const aliceViaB = on(b, alice);
    await warm(aliceViaB);
    expect((await alice.post('/revoke-sessions')).status).toBe(200);
    expect(await (await aliceViaB.get('/get-session')).json()).toBeNull();
  });

  it('change-password with revokeOtherSessions through A: B refuses the other sessions at once', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('password@example.com');
    const other = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await other.signIn('password@example.com');
    const otherViaB = on(b, other);
    await warm(otherViaB);
    const changed = await alice.post('/change-password', {
      currentPassword: 'correct horse battery',
      newPassword: 'another horse battery',
      revokeOtherSessions: true,
    });
    expect(changed.status).toBe(200);
    expect(await (await otherViaB.get('/get-session')).json()).toBeNull();
    expect(await (await on(b, alice).get('/get-session')).json()).not.toBeNull();
  });

  it('update-user through A: B shows the new name at once, in the session and in a fresh JWT', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('rename@example.com', 'correct horse battery', 'Old Name');
    const viaB = on(b, alice);
    await warm(viaB);
    const tokenBefore = (await (await viaB.get('/token')).json()).token as string;
    expect(JSON.parse(Buffer.from(tokenBefore.split('.')[1]!, 'base64url').toString()).name).toBe('Old Name');
    expect((await alice.post('/update-user', { name: 'New Name' })).status).toBe(200);
    expect((await (await viaB.get('/get-session')).json()).user.name).toBe('New Name');
    const tokenAfter = (await (await viaB.get('/token')).json()).token as string;
    expect(JSON.parse(Buffer.from(tokenAfter.split('.')[1]!, 'base64url').toString()).name).toBe('New Name');
  });

  it('a session deleted in the database by someone else (the application itself) stops working on B (Postgres notification)', async () => {
    const alice = new TestClient(`${a}/a/${slug}`, originOf(slug));
    await alice.signUp('foreign@example.com');
    const viaB = on(b, alice);
    const { session } = await warm(viaB);
    for (const t of TRIGGERS) await db.query(`ALTER TABLE ${t.split(' ')[0]} ENABLE TRIGGER ${t.split(' ')[1]}`);
    await db.query('DELETE FROM service_auth.sessions WHERE id = $1', [session.id]);
    // Notifications are asynchronous (delivered at commit, milliseconds): poll briefly.
    await waitFor(async () => (await (await viaB.get('/get-session')).json()) === null, {
      timeoutMs: 2000,
      intervalMs: 20,
      what: 'B to drop the deleted session',
    });
    expect((await viaB.get('/token')).status).toBe(401);
  });
});
