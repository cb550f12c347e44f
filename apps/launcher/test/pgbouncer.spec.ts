import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  dropApplicationDatabase,
  enforceApplicationRoles,
  pooledDatabases,
  provisionSignInTenant,
  roleScramSecret,
  syncPoolerWithPlatform,
  type PooledDatabase,
} from '@slipway/sign-in-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import { asApplicationId, openPlatformData, type ApplicationId, type PlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL, createTestDatabase, freePort, type TestDatabase } from '@slipway/testing';
import { pgbouncerPreflight, startPgbouncer, type PgbouncerHandle } from '../src/pgbouncer.js';

/**
 * The platform's PgBouncer as the launcher runs it (real pgbouncer, the real test Postgres):
 * applications' roles get in with their own password only, one application holds at most its
 * pool of server connections, and a client that never logs in holds no Postgres slot.
 */
describe("PgBouncer in front of the applications' databases", () => {
  const keyring = keyringFromMasterKey(randomBytes(32).toString('base64'));
  const server = new URL(TEST_SERVER_URL);
  let home: string;
  let db: TestDatabase;
  let platform: PlatformData;
  let bouncer: PgbouncerHandle;
  const apps: ApplicationId[] = [];
  let shop: PooledDatabase;
  let blog: PooledDatabase;

  const viaBouncer = (database: PooledDatabase, password = database.password) => {
    const url = new URL(bouncer.url);
    url.username = database.roleName;
    url.password = password;
    url.pathname = `/${database.databaseName}`;
    return new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 10_000 });
  };
  /** Server connections Postgres holds for a role (what a tenant takes of the server). */
  const serverConnections = async (role: string) => {
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    try {
      return Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [role])).rows[0].n);
    } finally {
      await admin.end();
    }
  };

  beforeAll(async () => {
    const binary = await pgbouncerPreflight();
    home = await mkdtemp(join(tmpdir(), 'slipway-pgbouncer-'));
    // As the launcher's SLIPWAY_HOME: PgBouncer's own user (postgres, when we are root) passes through.
    await chmod(home, 0o711);
    db = await createTestDatabase('pgbouncer');
    platform = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 2 });
    const owner = await platform.infrastructure.prisma.owner.create({ data: { email: 'o@example.com' } });
    for (const slug of ['shop', 'blog']) {
      const app = await platform.infrastructure.prisma.application.create({ data: { ownerId: owner.id, name: slug, slug } });
      apps.push(asApplicationId(app.id));
      await provisionSignInTenant({
        platform,
        keyring,
        adminDatabaseUrl: TEST_SERVER_URL,
        appsDomains: ['localhost:8080'],
        appsScheme: 'http',
        applicationId: asApplicationId(app.id),
        connectionLimit: 4,
      });
    }
    const all = pooledDatabases(keyring, await platform.applications.databases.listAll());
    [shop, blog] = [all.find((d) => d.roleName.endsWith(apps[0]!.replace(/-/g, '')))!, all.find((d) => d.roleName.endsWith(apps[1]!.replace(/-/g, '')))!];
    // PgBouncer starts knowing only the first; the second is told as the gateway tells it (RELOAD).
    bouncer = await startPgbouncer(home, binary, {
      port: await freePort(),
      server: { host: server.hostname, port: Number(server.port || 5432) },
      databases: [shop],
      poolSize: 2,
      maxClients: 500,
      loginTimeoutSeconds: 60,
      onRestart: async () => undefined,
      onCrashLoop: () => undefined,
    });
  }, 120_000);

  afterAll(async () => {
    await bouncer?.stop();
    for (const app of apps) await dropApplicationDatabase(TEST_SERVER_URL, app);
    await platform?.close();
    await db?.drop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("lets an application's role in with its own password, and the next application once the gateway told it", async () => {
    const client = viaBouncer(shop);
    await client.connect();
    expect((await client.query('SELECT current_user AS u, current_database() AS d')).rows[0]).toEqual({ u: shop.roleName, d: shop.databaseName });
    await client.end();
    await expect(connectOnce(viaBouncer(blog))).rejects.toThrow();
    await syncPoolerWithPlatform(
      { dir: bouncer.dir, adminUrl: bouncer.adminUrl, server: { host: server.hostname, port: Number(server.port || 5432) } },
      platform.applications.databases,
      keyring,
    );
    await connectOnce(viaBouncer(blog));
  });

  it("refuses a wrong password, and another application's password for this role", async () => {
    await expect(connectOnce(viaBouncer(shop, 'not-the-password'))).rejects.toThrow(/password authentication failed|SASL authentication failed/);
    await expect(connectOnce(viaBouncer(shop, blog.password))).rejects.toThrow(/password authentication failed|SASL authentication failed/);
  });

  it('gives one application at most its pool of server connections: its further clients wait, the server never sees them', async () => {
    const holders = [viaBouncer(shop), viaBouncer(shop)];
    for (const c of holders) {
      await c.connect();
      await c.query('SELECT 1');
    }
    const third = viaBouncer(shop);
    await third.connect();
    let answered = false;
    const pending = third.query('SELECT 1 AS one').then((r) => {
      answered = true;
      return r;
    });
    // While the two hold theirs: still two server connections, and the third has none.
    for (let i = 0; i < 10; i++) {
      expect(await serverConnections(shop.roleName)).toBeLessThanOrEqual(2);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(answered).toBe(false);
    await holders[0]!.end();
    expect((await pending).rows).toEqual([{ one: 1 }]);
    await holders[1]!.end();
    await third.end();
  });

  it('holds 120 clients that never log in without a single Postgres connection', async () => {
    const before = await serverConnections(blog.roleName);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 120; i++) sockets.push(await startupOnly(Number(new URL(bouncer.url).port), blog.roleName, blog.databaseName));
      // Each got PgBouncer's SCRAM challenge (it is waiting for a password) and the server nothing.
      expect(await serverConnections(blog.roleName)).toBe(before);
      // Meanwhile the application itself still gets in.
      await connectOnce(viaBouncer(blog));
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('bounds each application role on the server too (CONNECTION LIMIT), also for roles made before (the back-fill)', async () => {
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER ROLE ${shop.roleName} CONNECTION LIMIT -1 PASSWORD '${shop.password}'`);
      await enforceApplicationRoles(TEST_SERVER_URL, [shop], 3);
      // PgBouncer's idle server connections of the earlier tests count too: gone, for a clean count.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [shop.roleName]);
      const { rows } = await admin.query('SELECT rolconnlimit, rolpassword FROM pg_authid WHERE rolname = $1', [shop.roleName]);
      expect(rows[0]).toEqual({ rolconnlimit: 3, rolpassword: roleScramSecret(shop.roleName, shop.password) });
    } finally {
      await admin.end();
    }
    const direct = (n: number) => {
      const url = new URL(TEST_SERVER_URL);
      url.username = shop.roleName;
      url.password = shop.password;
      url.pathname = `/${shop.databaseName}`;
      return Array.from({ length: n }, () => {
        const client = new pg.Client({ connectionString: url.toString() });
        client.on('error', () => undefined);
        return client;
      });
    };
    const held = direct(3);
    for (const c of held) await c.connect();
    await expect(connectOnce(direct(1)[0]!)).rejects.toThrow(/too many connections for role/);
    for (const c of held) await c.end();
  });
});

async function connectOnce(client: pg.Client): Promise<void> {
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A raw TCP client that sends the start-up message and nothing more; resolves once PgBouncer asked for a password. */
function startupOnly(port: number, user: string, database: string): Promise<Socket> {
  const params = Buffer.from(`user\0${user}\0database\0${database}\0\0`, 'utf8');
  const message = Buffer.alloc(8 + params.length);
  message.writeInt32BE(message.length, 0);
  message.writeInt32BE(196608, 4);
  params.copy(message, 8);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(message));
    const timer = setTimeout(() => reject(new Error('no authentication request within 10 s')), 10_000);
    socket.once('data', (data) => {
      clearTimeout(timer);
      // 'R' AuthenticationSASL (10): PgBouncer wants a SCRAM exchange.
      if (data[0] === 0x52 && data.readInt32BE(5) === 10) resolve(socket);
      else reject(new Error(`unexpected answer ${data.subarray(0, 16).toString('hex')}`));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
