// bench/auth: get-session, /token and sign-in/email — requests/s and p99 — of the sign-in
// service vs a stock Better Auth server (JWT plugin), same Postgres, same machine, one run.
// Usage: pnpm nx run-many -t build -p auth-service && node bench/auth/run.mjs
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 20), TEST_DATABASE_URL, TEST_REDIS_URL.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { dropApplicationDatabase, provisionSignInTenant } from '@slipway/auth-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import { applyMigrations, createPrismaClient, quoteIdent, withDatabase } from '@slipway/db';

const SERVER = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ORIGIN = 'http://bench.localhost:8080';
const root = fileURLToPath(new URL('../..', import.meta.url));
const suffix = randomBytes(4).toString('hex');
const platformDb = `slipway_bench_platform_${suffix}`;
const betterAuthDb = `slipway_bench_ba_${suffix}`;
const children = [];

async function admin(sql) {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Starts a server process and resolves once `readyUrl` answers 200. */
function start(args, env, readyUrl, cwd = root) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${output.slice(-2000)}`)));
    const poll = () =>
      fetch(readyUrl).then(
        (r) => (r.ok ? resolve(child) : setTimeout(poll, 200)),
        () => setTimeout(poll, 200),
      );
    poll();
  });
}

const freePort = () =>
  new Promise((resolve) => {
    import('node:net').then(({ createServer }) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });
  });

function cookieFrom(res, name) {
  const line = res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`) || l.includes(`.${name}=`) || l.split('=')[0].endsWith(name));
  return line.split(';')[0];
}

async function run(title, opts) {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const non2xx = result.non2xx + result.errors;
  return { title, rps: Math.round(result.requests.average), p99: result.latency.p99, non2xx };
}

const log = (m) => process.stderr.write(`[bench] ${m}\n`);
async function main() {
  await admin(`CREATE DATABASE ${quoteIdent(platformDb)}`);
  await admin(`CREATE DATABASE ${quoteIdent(betterAuthDb)}`);
  const platformUrl = withDatabase(SERVER, platformDb);
  log('databases created');
  await applyMigrations(platformUrl);
  const masterKey = randomBytes(32).toString('base64');
  const prisma = createPrismaClient(platformUrl, { max: 2 });
  const owner = await prisma.owner.create({ data: { email: 'bench@example.com' } });
  const app = await prisma.application.create({ data: { ownerId: owner.id, name: 'bench', slug: 'bench' } });
  try {
    await provisionSignInTenant({ prisma, keyring: keyringFromMasterKey(masterKey), platformDatabaseUrl: platformUrl, adminDatabaseUrl: SERVER, appsDomains: ['localhost:8080'], appsScheme: 'http', applicationId: app.id });

    log('tenant provisioned');
    const ourPort = await freePort();
    const ours = `http://127.0.0.1:${ourPort}`;
    await start(['apps/auth-service/dist/main.js'], {
      DATABASE_URL: platformUrl, REDIS_URL: REDIS, SLIPWAY_MASTER_KEY: masterKey, PORT: String(ourPort), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
      AUTH_PUBLIC_URL: ours, AUTH_REDIS_PREFIX: `slipway-bench:${suffix}:`,
      // Benchmarks measure throughput, not the limiter: raise both allowances (see README).
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000000', AUTH_RATE_LIMIT_SESSION_MAX: '100000000',
    }, `${ours}/health/ready`);
    log('auth-service up');
    const baPort = await freePort();
    const ba = `http://127.0.0.1:${baPort}/api/auth`;
    await start([fileURLToPath(new URL('./better-auth-server.mjs', import.meta.url)), String(baPort), withDatabase(SERVER, betterAuthDb), ORIGIN], {}, `${ba}/ok`, fileURLToPath(new URL('.', import.meta.url)));

    log('better-auth up');
    const credentials = JSON.stringify({ email: 'bench@example.com', password: 'correct horse battery' });
    const targets = [
      { name: 'slipway auth-service', base: `${ours}/a/bench`, cookieName: 'slipway.session_token' },
      { name: 'Better Auth 1.7.25 + jwt()', base: ba, cookieName: 'better-auth.session_token' },
    ];
    const rows = [];
    for (const t of targets) {
      const headers = { 'content-type': 'application/json', origin: ORIGIN };
      const up = await fetch(`${t.base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench', email: 'bench@example.com', password: 'correct horse battery' }) });
      if (!up.ok) throw new Error(`${t.name} sign-up: ${up.status} ${await up.text()}`);
      const cookie = cookieFrom(up, t.cookieName);
      const check = await fetch(`${t.base}/token`, { headers: { cookie } });
      if (!check.ok) throw new Error(`${t.name} /token: ${check.status}`);
      const only = process.env.BENCH_ONLY; // e.g. "sign-in" to measure one endpoint
      if (!only || only === 'get-session') rows.push({ target: t.name, ...(await run('GET /get-session', { url: `${t.base}/get-session`, headers: { cookie } })) });
      if (!only || only === 'token') rows.push({ target: t.name, ...(await run('GET /token', { url: `${t.base}/token`, headers: { cookie } })) });
      if (!only || only === 'sign-in') rows.push({ target: t.name, ...(await run('POST /sign-in/email', { url: `${t.base}/sign-in/email`, method: 'POST', headers, body: credentials })) });
    }

    const lines = [
      `bench/auth — ${new Date().toISOString()} — ${SECONDS}s per endpoint, ${CONNECTIONS} connections, node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`,
      `hashing: slipway bcrypt cost 10; Better Auth scrypt N=16384 r=16 p=1 (its default)`,
      '',
      '| endpoint | server | req/s | p99 ms | non-2xx/errors |',
      '|---|---|---:|---:|---:|',
      ...['GET /get-session', 'GET /token', 'POST /sign-in/email'].flatMap((title) => rows.filter((r) => r.title === title).map((r) => `| ${title} | ${r.target} | ${r.rps} | ${r.p99} | ${r.non2xx} |`)),
      '',
      ...['GET /get-session', 'GET /token', 'POST /sign-in/email'].filter((title) => rows.some((r) => r.title === title)).map((title) => {
        const [a, b] = rows.filter((r) => r.title === title);
        return `${title}: slipway / Better Auth throughput = ${(a.rps / Math.max(1, b.rps)).toFixed(2)}×`;
      }),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify(rows)); // read by bench/run.mjs
    mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
    if (!process.env.BENCH_ONLY) writeFileSync(new URL(`../results/auth-${new Date().toISOString().slice(0, 10)}.md`, import.meta.url), `${lines.join('\n')}\n`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await prisma.$disconnect();
    await dropApplicationDatabase(SERVER, app.id).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await admin(`DROP DATABASE IF EXISTS ${quoteIdent(platformDb)} WITH (FORCE)`).catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${quoteIdent(betterAuthDb)} WITH (FORCE)`).catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench/auth failed: ${error.stack ?? error}\n`);
    for (const c of children) c.kill('SIGTERM');
    process.exit(1);
  },
);
