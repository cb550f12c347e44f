/**
 * Issue 27, "an app exhausts Postgres": a tenant's app looks for every Postgres-ish port it can
 * reach from its sandbox and opens 120 connections to each that never log in (they used to hold 83
 * of the platform Postgres's slots for authentication_timeout: the platform's superuser got "sorry,
 * too many clients already" and another tenant's sign-up answered 500). Now: the platform's
 * Postgres port is refused inside the app's namespace, PgBouncer (the only way to an app's own
 * database) holds the flood without a server connection, and meanwhile the platform's superuser
 * connects and a victim tenant switches sign-in on, signs a user up and deploys. An app with no
 * database does not even reach PgBouncer.
 */
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { expectNone } from './support/evidence.js';
import { fixtureCopy } from './support/host.js';
import { HostilePlatform, type Account } from './support/platform.js';
import { parse } from './support/scenario.js';

interface Flood {
  port: number;
  states: Record<string, number>;
  authRequests: number;
  reopened: number;
}
interface Attack {
  hasDatabaseUrl: boolean;
  scan: { open: number[]; postgresish: number[]; complete: boolean };
  floods: Flood[];
  held: number;
}

const COUNT = 120;

describe('an app floods every Postgres port it can reach with connections that never log in', () => {
  let platform: HostilePlatform | undefined;
  let attacker: Account;
  let bystander: Account;
  let victim: Account;
  const cleanup: string[] = [];
  const get = () => {
    if (!platform) throw new Error('the platform did not start (see beforeAll)');
    return platform;
  };
  /** Client backends of the platform's Postgres right now (asked as the platform's superuser: a new connection each time). */
  const backends = async () =>
    Number((await get().query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`))[0]!.n);

  beforeAll(async () => {
    platform = await HostilePlatform.start('pg-reach');
    attacker = await platform.bootstrap('flood@example.com', 'Flood');
    bystander = await platform.bootstrap('nodb@example.com', 'No Database');
    victim = await platform.bootstrap('victim@example.com', 'Victim');
    // The attacker has a database (sign-in on), so PgBouncer's port is forwarded into its sandbox.
    await platform.enableSignIn(attacker);
    for (const who of [attacker, bystander]) {
      const dir = await fixtureCopy('pg-flood');
      cleanup.push(dir);
      const task = await platform.deploy(who, dir);
      if (task.status !== 'succeeded') throw new Error(`${who.slug} did not deploy: ${JSON.stringify(task.error)}`);
    }
  }, 600_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('finds the platform Postgres refused, PgBouncer holding the flood without server slots, and the platform and a victim tenant working meanwhile', async () => {
    const p = get();
    const before = await backends();
    const violations: string[] = [];
    const attackResponse = await p.viaEdge(attacker.slug, `/attack?count=${COUNT}&holdMs=100000&also=${p.ports.postgres},${p.ports.pgbouncer}`, 150_000);
    expect(attackResponse.status).toBe(200);
    const attack = parse<Attack>(attackResponse.body, 'the attacker');
    const flood = (port: number) => attack.floods.find((f) => f.port === port);

    // Inside the attacker's namespace: the platform's Postgres is not there at all.
    const postgres = flood(p.ports.postgres);
    if (!postgres || postgres.states['refused'] !== COUNT)
      violations.push(`the platform's Postgres port ${p.ports.postgres} was not refused inside the app's namespace: ${JSON.stringify(postgres)}`);
    if (attack.scan.open.includes(p.ports.postgres)) violations.push(`the scan found the platform's Postgres port ${p.ports.postgres} open`);
    for (const port of attack.scan.postgresish) if (port !== p.ports.pgbouncer) violations.push(`the app reached another Postgres-speaking port: ${port}`);
    // PgBouncer took every connection and asked each for its SCRAM proof (AuthenticationSASL = 10).
    const bouncer = flood(p.ports.pgbouncer);
    if (!bouncer || bouncer.authRequests !== COUNT)
      violations.push(`PgBouncer did not hold the ${COUNT} connections waiting for a password: ${JSON.stringify(bouncer)}`);

    // While the flood is held: no server slot taken, the superuser connects, a victim works.
    const during = await backends();
    if (during - before >= 20) violations.push(`the platform's Postgres gained ${during - before} client backends during the flood (${before} → ${during})`);
    const attackerRole = `app_${attacker.applicationId.replace(/-/g, '')}`;
    const attackerSlots = Number((await p.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [attackerRole]))[0]!.n);
    if (attackerSlots > 0) violations.push(`the attacker's role holds ${attackerSlots} server connections`);
    const superuser = new pg.Client({ connectionString: (await p.runtime()).databaseUrl, connectionTimeoutMillis: 10_000 });
    try {
      await superuser.connect();
      await superuser.query('SELECT 1');
    } catch (error) {
      violations.push(`the platform's superuser could not connect during the flood: ${(error as Error).message}`);
    } finally {
      await superuser.end().catch(() => undefined);
    }
    try {
      await p.enableSignIn(victim);
      const signUp = await p.signUp(victim, 'visitor@example.com');
      if (signUp.status !== 200) violations.push(`the victim's sign-up answered ${signUp.status}: ${signUp.body}`);
    } catch (error) {
      violations.push(`the victim could not switch sign-in on during the flood: ${(error as Error).message.slice(0, 500)}`);
    }
    const site = await fixtureCopy('static-site');
    cleanup.push(site);
    const deployed = await p.deploy(victim, site);
    if (deployed.status !== 'succeeded') violations.push(`the victim's deploy ${deployed.status} during the flood: ${JSON.stringify(deployed.error)}`);
    if (/too many clients already/.test(p.log())) violations.push('a platform service met "sorry, too many clients already"');
    expectNone("a tenant's connection flood reached the platform's Postgres", violations, { before, during, attack });
  }, 400_000);

  it("does not even forward PgBouncer's port into an app that has no database", async () => {
    const p = get();
    const response = await p.viaEdge(bystander.slug, `/attack?count=1&holdMs=1000&also=${p.ports.postgres},${p.ports.pgbouncer}`, 150_000);
    const attack = parse<Attack>(response.body, 'the app without a database');
    const violations: string[] = [];
    if (attack.hasDatabaseUrl) violations.push('the app without a database was given a DATABASE_URL');
    for (const port of [p.ports.postgres, p.ports.pgbouncer]) {
      const f = attack.floods.find((x) => x.port === port);
      if (!f || f.states['refused'] !== 1) violations.push(`port ${port} was not refused inside its namespace: ${JSON.stringify(f)}`);
    }
    if (attack.scan.postgresish.length) violations.push(`it reached Postgres-speaking ports ${attack.scan.postgresish.join(', ')}`);
    expectNone('an app without a database reaches a database port', violations, attack);
  }, 200_000);
});
