import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { createPrismaClient } from '@slipway/platform-schema';
import { serverUnavailable, throughRestart } from './database-restart.js';

/** The machine's Postgres (tests' own), reached through a TCP relay this test opens and closes as a restarting server would appear. */
const UPSTREAM = { host: '127.0.0.1', port: 5432 };

class Relay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  constructor(readonly port: number) {}

  /** Listening and relaying to Postgres (the server is "up"). */
  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(UPSTREAM);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** Not listening, every connection cut (the server "crashed"). */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

async function freeLocalPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('throughRestart: a read waits out a database server that is restarting', () => {
  let relay: Relay;
  let pool: pg.Pool;

  beforeEach(async () => {
    relay = new Relay(await freeLocalPort());
    pool = new pg.Pool({ host: '127.0.0.1', port: relay.port, user: 'postgres', database: 'postgres', max: 2, connectionTimeoutMillis: 2000 });
    pool.on('error', () => undefined);
  });
  afterEach(async () => {
    await relay.close();
    await pool.end().catch(() => undefined);
  });

  it('connection refused while the server is down: answered once it is back', async () => {
    setTimeout(() => void relay.open(), 700);
    const started = Date.now();
    const { rows } = await throughRestart(() => pool.query<{ one: number }>('SELECT 1 AS one'), 5000);
    expect(rows[0]!.one).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });

  it('a pooled connection cut by the crash: the read is tried again on a new one', async () => {
    await relay.open();
    await pool.query('SELECT 1');
    await relay.close();
    setTimeout(() => void relay.open(), 500);
    const { rows } = await throughRestart(() => pool.query<{ two: number }>('SELECT 2 AS two'), 5000);
    expect(rows[0]!.two).toBe(2);
  });

  it('fails as before when the server stays away past the wait, and at once with a wait of 0', async () => {
    const started = Date.now();
    await expect(throughRestart(() => pool.query('SELECT 1'), 800)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - started).toBeLessThan(3000);
    let tries = 0;
    await expect(throughRestart(() => (tries++, pool.query('SELECT 1')), 0)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(tries).toBe(1);
  });

  it('never repeats a query that failed for its own reasons', async () => {
    await relay.open();
    let tries = 0;
    await expect(throughRestart(() => (tries++, pool.query('SELEC 1')), 5000)).rejects.toMatchObject({ code: '42601' });
    expect(tries).toBe(1);
    expect(serverUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(serverUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
  });

  it('Prisma (over @prisma/adapter-pg) too: a refused server is waited out, a backend terminated mid-query counts as the server going away', async () => {
    const prisma = createPrismaClient(`postgresql://postgres@127.0.0.1:${relay.port}/postgres`, { max: 1 });
    try {
      setTimeout(() => void relay.open(), 600);
      const rows = await throughRestart(() => prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`, 5000);
      expect(rows[0]!.one).toBe(1);
      const [{ pid }] = await prisma.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const sleeping = prisma.$queryRaw`SELECT pg_sleep(5)`.then(
        () => undefined,
        (error: unknown) => error,
      );
      await new Promise((r) => setTimeout(r, 300));
      const admin = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await admin.end();
      const error = await sleeping;
      expect(error).toBeDefined();
      expect(serverUnavailable(error)).toBe(true);
    } finally {
      await prisma.$disconnect();
    }
  });
});
