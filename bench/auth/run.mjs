// bench/auth: get-session, /token and sign-in/email — requests/s and p99 — of the sign-in
// service vs a stock Better Auth server (JWT plugin), same Postgres, same machine, one run.
// Usage: pnpm nx run-many -t build -p auth-service && node bench/auth/run.mjs
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 20), BENCH_ROUNDS (default 3: every
// endpoint is measured on both servers, alternately, this many times; the table shows medians),
// BENCH_STRONGER_COST (default 11: sign-in is also measured against a second auth-service with this
// bcrypt cost, whose hash costs more CPU than Better Auth's scrypt; 0 = skip), BENCH_EQUAL_HASHING
// (default 1: sign-in is also measured against a second Better Auth server configured with bcrypt
// at auth-service's default cost 10 — the exact equal-hashing comparison; 0 = skip), BENCH_ONLY,
// BENCH_NODE_ARGS, BENCH_VISITORS_POOL (default 200000: distinct signed addresses prepared per
// many-visitors measurement), TEST_DATABASE_URL, TEST_REDIS_URL.
// Many visitors (the headline rows): every request carries a fresh visitor address — to ours the
// signed x-slipway-client-address header an application's server sends (@slipway/sign-in-sdk),
// against a second auth-service with the DEFAULT per-visitor limiter on; to Better Auth a fresh
// X-Forwarded-For. The one-address rows measure the same endpoints from one client with the
// limiter raised out of the way. Then the limiter's memory after 1 M distinct visitors
// (limiter-memory.mjs) is printed.
import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { hashPassword, verifyPassword } from 'better-auth/crypto';
import { dropApplicationDatabase, provisionSignInTenant } from '@slipway/sign-in-core';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { applyMigrations, quoteIdent, withDatabase } from '@slipway/platform-schema';
import { openPlatformData } from '@slipway/platform-data';

const SERVER = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STRONGER_COST = Number(process.env.BENCH_STRONGER_COST ?? 11);
const EQUAL_HASHING = process.env.BENCH_EQUAL_HASHING !== '0';
const VISITORS_POOL = Number(process.env.BENCH_VISITORS_POOL ?? 200_000);
const CLIENT_ADDRESS_HEADER = 'x-slipway-client-address';
let nextVisitor = 1;
/** The next `count` visitor addresses, never used before in this run (10.0.0.1, 10.0.0.2, …). */
function visitorAddresses(count) {
  const out = new Array(count);
  for (let i = 0; i < count; i++, nextVisitor++) out[i] = `10.${(nextVisitor >>> 16) & 255}.${(nextVisitor >>> 8) & 255}.${nextVisitor & 255}`;
  return out;
}
/** The header an application's server sends for its visitor (format of @slipway/sign-in-sdk signClientAddress). */
function signedAddress(secret, address, seconds = String(Math.floor(Date.now() / 1000))) {
  return `${address};${seconds};${createHmac('sha256', secret).update(`client-address\n${address}\n${seconds}`).digest('base64url')}`;
}
/** autocannon options adding a per-request header from a prepared pool (prepared before the load: both servers' clients do the same work). */
function perRequestHeader(opts, name, values) {
  let i = 0;
  return { ...opts, requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, [name]: values[i++ % values.length] } }) }] };
}
const BCRYPT_COST = 10; // auth-service's default (AUTH_BCRYPT_COST)
// bcrypt as auth-service loads it (the bench does not depend on it itself).
const bcrypt = createRequire(new URL('../../apps/auth-service/package.json', import.meta.url))('bcrypt');
const ORIGIN = 'http://bench.localhost:8080';
const root = fileURLToPath(new URL('../..', import.meta.url));
const suffix = randomBytes(4).toString('hex');
const platformDb = `slipway_bench_platform_${suffix}`;
const betterAuthDb = `slipway_bench_ba_${suffix}`;
const betterAuthBcryptDb = `slipway_bench_babc_${suffix}`;
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
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One password verification, each server's way, timed alone (median of 7) before any load. */
async function hashTimings() {
  const time = async (fn) => {
    const samples = [];
    for (let i = 0; i < 7; i++) {
      const start = performance.now();
      await fn();
      samples.push(performance.now() - start);
    }
    return median(samples).toFixed(1);
  };
  const password = 'correct horse battery';
  const result = {};
  for (const cost of [BCRYPT_COST, ...(STRONGER_COST ? [STRONGER_COST] : [])]) {
    const hash = await bcrypt.hash(password, cost);
    result[`bcrypt cost ${cost}`] = await time(() => bcrypt.compare(password, hash));
  }
  const scryptHash = await hashPassword(password);
  result['Better Auth scrypt N=16384 r=16 p=1'] = await time(() => verifyPassword({ hash: scryptHash, password }));
  return result;
}
async function main() {
  const loadBefore = (await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  await admin(`CREATE DATABASE ${quoteIdent(platformDb)}`);
  await admin(`CREATE DATABASE ${quoteIdent(betterAuthDb)}`);
  await admin(`CREATE DATABASE ${quoteIdent(betterAuthBcryptDb)}`);
  const platformUrl = withDatabase(SERVER, platformDb);
  log('databases created');
  await applyMigrations(platformUrl);
  const masterKey = randomBytes(32).toString('base64');
  const platform = openPlatformData({ DATABASE_URL: platformUrl }, { poolSize: 2 });
  const prisma = platform.infrastructure.prisma;
  const owner = await prisma.owner.create({ data: { email: 'bench@example.com' } });
  const app = await prisma.application.create({ data: { ownerId: owner.id, name: 'bench', slug: 'bench' } });
  // Issue 33: a second application with every sign-in plugin on; its user has an active
  // organization, so its JWT carries the organization's claims.
  const pluginsApp = await prisma.application.create({ data: { ownerId: owner.id, name: 'bench-plugins', slug: 'bench-plugins' } });
  try {
    await provisionSignInTenant({
      platform,
      keyring: keyringFromMasterKey(masterKey),
      adminDatabaseUrl: SERVER,
      appsDomains: ['localhost:8080'],
      appsScheme: 'http',
      applicationId: app.id,
    });
    await provisionSignInTenant({
      platform,
      keyring: keyringFromMasterKey(masterKey),
      adminDatabaseUrl: SERVER,
      appsDomains: ['localhost:8080'],
      appsScheme: 'http',
      applicationId: pluginsApp.id,
    });
    const every = { enabled: true };
    await prisma.signInService.update({
      where: { applicationId: pluginsApp.id },
      data: { settings: { plugins: { twoFactor: every, passkey: every, magicLink: every, emailOTP: every, organization: every, admin: every } } },
    });

    log('tenant provisioned');
    const startOurs = async (bcryptCost, defaultLimits = false) => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      // BENCH_NODE_ARGS: extra node flags for our server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
      const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
      await start(
        [...nodeArgs, 'apps/auth-service/dist/main.js'],
        {
          DATABASE_URL: platformUrl,
          REDIS_URL: REDIS,
          SLIPWAY_MASTER_KEY: masterKey,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          AUTH_PUBLIC_URL: url,
          AUTH_REDIS_PREFIX: `slipway-bench:${suffix}:${bcryptCost}:${defaultLimits ? 'visitors:' : ''}`,
          AUTH_BCRYPT_COST: String(bcryptCost),
          // One-address rows measure throughput, not the limiter: raise both allowances (see README).
          // The many-visitors server keeps the defaults: each visitor has its own allowance.
          // Better Auth runs with rateLimit disabled (better-auth-server.mjs).
          ...(defaultLimits ? {} : { AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000000', AUTH_RATE_LIMIT_SESSION_MAX: '100000000' }),
        },
        `${url}/health/ready`,
      );
      return url;
    };
    const timings = await hashTimings();
    log(`hash timings (ms): ${JSON.stringify(timings)}`);
    const ours = await startOurs(BCRYPT_COST);
    log('auth-service up');
    const oursVisitors = await startOurs(BCRYPT_COST, true);
    log('auth-service (default per-visitor limiter) up');
    const service = await prisma.signInService.findUniqueOrThrow({ where: { applicationId: app.id } });
    const cookieSecret = decryptEnvelopeToString(keyringFromMasterKey(masterKey), service.cookieSecret, envelopeBinding.cookieSecret(app.id));
    const baPort = await freePort();
    const ba = `http://127.0.0.1:${baPort}/api/auth`;
    await start(
      [fileURLToPath(new URL('./better-auth-server.mjs', import.meta.url)), String(baPort), withDatabase(SERVER, betterAuthDb), ORIGIN],
      {},
      `${ba}/ok`,
      fileURLToPath(new URL('.', import.meta.url)),
    );

    log('better-auth up');
    // e.g. "sign-in" to measure one endpoint, "get-session-many,token-many" the many-visitors rows.
    const onlyList = process.env.BENCH_ONLY?.split(',');
    const targets = [
      { name: 'slipway auth-service', base: `${ours}/a/bench`, cookieName: 'slipway.session_token' },
      { name: 'Better Auth 1.7.25 + jwt()', base: ba, cookieName: 'better-auth.session_token' },
      // Every plugin on (issue 33), same server: session reads must cost what they cost without.
      { name: 'slipway auth-service, every plugin on', base: `${ours}/a/bench-plugins`, cookieName: 'slipway.session_token', pluginsOn: true },
      // Same tenant and user as the first; the default limiter, one fresh signed visitor per request.
      { name: 'slipway auth-service, default limiter', base: `${oursVisitors}/a/bench`, cookieName: 'slipway.session_token', visitorsOnly: true },
    ];
    if (STRONGER_COST && (!onlyList || onlyList.includes('sign-in'))) {
      const stronger = await startOurs(STRONGER_COST);
      log(`auth-service (bcrypt ${STRONGER_COST}) up`);
      targets.push({
        name: `slipway auth-service, bcrypt cost ${STRONGER_COST}`,
        base: `${stronger}/a/bench`,
        cookieName: 'slipway.session_token',
        signInOnly: true,
      });
    }
    if (EQUAL_HASHING && (!onlyList || onlyList.includes('sign-in'))) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}/api/auth`;
      await start(
        [
          fileURLToPath(new URL('./better-auth-server.mjs', import.meta.url)),
          String(port),
          withDatabase(SERVER, betterAuthBcryptDb),
          ORIGIN,
          String(BCRYPT_COST),
        ],
        {},
        `${base}/ok`,
        fileURLToPath(new URL('.', import.meta.url)),
      );
      log(`better-auth (bcrypt ${BCRYPT_COST}) up`);
      targets.push({
        name: `Better Auth 1.7.25 + jwt(), bcrypt cost ${BCRYPT_COST}`,
        base,
        cookieName: 'better-auth.session_token',
        signInOnly: true,
        equalHashing: true,
      });
    }
    const headers = { 'content-type': 'application/json', origin: ORIGIN };
    for (const t of targets) {
      if (t.visitorsOnly) continue;
      // bcrypt.compare works at the cost stored in the hash: the stronger server signs up its own user.
      t.email = t.signInOnly && !t.equalHashing ? 'bench-stronger@example.com' : 'bench@example.com';
      // Each application trusts its own address: the plugins' one is bench-plugins.localhost.
      const pageHeaders = t.pluginsOn ? { ...headers, origin: 'http://bench-plugins.localhost:8080' } : headers;
      const up = await fetch(`${t.base}/sign-up/email`, {
        method: 'POST',
        headers: pageHeaders,
        body: JSON.stringify({ name: 'Bench', email: t.email, password: 'correct horse battery' }),
      });
      if (!up.ok) throw new Error(`${t.name} sign-up: ${up.status} ${await up.text()}`);
      t.cookie = cookieFrom(up, t.cookieName);
      if (t.pluginsOn) {
        const org = await fetch(`${t.base}/organization/create`, {
          method: 'POST',
          headers: { ...pageHeaders, cookie: t.cookie },
          body: JSON.stringify({ name: 'Bench Org', slug: 'bench-org' }),
        });
        if (!org.ok) throw new Error(`${t.name} organization/create: ${org.status} ${await org.text()}`);
      }
      const check = await fetch(`${t.base}/token`, { headers: { cookie: t.cookie } });
      if (!check.ok) throw new Error(`${t.name} /token: ${check.status}`);
      if (t.pluginsOn) {
        // The measured path is the one with the organization's claims in the JWT.
        const claims = JSON.parse(Buffer.from((await check.json()).token.split('.')[1], 'base64url').toString());
        if (!claims.activeOrganizationId || claims.organizationRole !== 'owner')
          throw new Error(`${t.name}: no organization claims in ${JSON.stringify(claims)}`);
      }
    }
    const visitors = targets.find((t) => t.visitorsOnly);
    visitors.cookie = targets[0].cookie;
    {
      // The signed address is honoured and the limiter is on: one visitor gets its 300 reads, then is
      // refused (a few more may pass if a window boundary falls inside: the sliding-window estimate).
      const header = { cookie: visitors.cookie, [CLIENT_ADDRESS_HEADER]: signedAddress(cookieSecret, visitorAddresses(1)[0]) };
      const statuses = [];
      for (let i = 0; i < 400; i++) statuses.push((await fetch(`${visitors.base}/get-session`, { headers: header })).status);
      const fresh = await fetch(`${visitors.base}/get-session`, {
        headers: { cookie: visitors.cookie, [CLIENT_ADDRESS_HEADER]: signedAddress(cookieSecret, visitorAddresses(1)[0]) },
      });
      if (statuses.slice(0, 300).some((st) => st !== 200) || !statuses.slice(300).includes(429) || fresh.status !== 200)
        throw new Error(
          `many-visitors server: limiter check failed (${JSON.stringify(statuses.reduce((m, st, i) => ((m[st] ??= []).push(i), m), {}))}, fresh ${fresh.status})`,
        );
      log(
        `many-visitors check: 300 reads admitted, ${statuses.filter((st) => st === 429).length} of the next 100 refused (429), a fresh signed visitor admitted`,
      );
    }
    // Many visitors: every request a fresh address, prepared before the load (signed for ours, X-Forwarded-For for Better Auth).
    const visitorOpts = (t, path) => {
      const addresses = visitorAddresses(VISITORS_POOL);
      const base = { url: `${t.base}${path}`, headers: { cookie: t.cookie } };
      return t.visitorsOnly
        ? perRequestHeader(
            base,
            CLIENT_ADDRESS_HEADER,
            addresses.map((a) => signedAddress(cookieSecret, a)),
          )
        : perRequestHeader(base, 'x-forwarded-for', addresses);
    };
    const endpoints = [
      { key: 'get-session', visitors: true, title: 'GET /get-session, many visitors', opts: (t) => visitorOpts(t, '/get-session') },
      { key: 'token', visitors: true, title: 'GET /token, many visitors', opts: (t) => visitorOpts(t, '/token') },
      { key: 'get-session', title: 'GET /get-session', opts: (t) => ({ url: `${t.base}/get-session`, headers: { cookie: t.cookie } }) },
      { key: 'token', title: 'GET /token', opts: (t) => ({ url: `${t.base}/token`, headers: { cookie: t.cookie } }) },
      {
        key: 'sign-in',
        title: 'POST /sign-in/email',
        opts: (t) => ({ url: `${t.base}/sign-in/email`, method: 'POST', headers, body: JSON.stringify({ email: t.email, password: 'correct horse battery' }) }),
      },
    ].filter((e) => !onlyList || onlyList.includes(e.visitors ? `${e.key}-many` : e.key));
    // Which server answers which rows: the many-visitors rows compare ours (default limiter) with Better Auth.
    const measures = (t, e) =>
      t.pluginsOn
        ? !e.visitors && e.key !== 'sign-in'
        : e.visitors
          ? t.visitorsOnly || t === targets[1]
          : !t.visitorsOnly && (!t.signInOnly || e.key === 'sign-in');
    // Warm-up (not recorded): JIT, connection pools and key caches of every server.
    for (const t of targets) for (const e of endpoints) if (measures(t, e)) await autocannon({ connections: CONNECTIONS, duration: 2, ...e.opts(t) });
    await new Promise((resolve) => setTimeout(resolve, 5000));
    // Rounds alternate the servers endpoint by endpoint, so load from elsewhere on the machine hits both alike.
    const samples = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const e of endpoints) {
        for (const t of targets) {
          if (!measures(t, e)) continue;
          const r = await run(e.title, e.opts(t));
          log(`round ${round} ${e.title} ${t.name}: ${r.rps} req/s, p99 ${r.p99} ms`);
          samples.push({ round, target: t.name, ...r });
          // Sign-in leaves bcrypt/scrypt work queued on the server's thread pool (p99 of seconds)
          // after the load stops: let it drain so it does not land on the next measurement.
          if (e.key === 'sign-in') await new Promise((resolve) => setTimeout(resolve, 5000));
        }
      }
    }
    const rows = [];
    for (const e of endpoints) {
      for (const t of targets) {
        const mine = samples.filter((x) => x.title === e.title && x.target === t.name);
        if (!mine.length) continue;
        rows.push({
          title: e.title,
          target: t.name,
          rps: median(mine.map((x) => x.rps)),
          p99: median(mine.map((x) => x.p99)),
          non2xx: mine.reduce((n, x) => n + x.non2xx, 0),
          each: mine.map((x) => x.rps).join(' / '),
        });
      }
    }
    // The limiter's memory after 1 M distinct visitors (the real class, real Redis, service defaults).
    const memory = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(new URL('./limiter-memory.mjs', import.meta.url)), '1000000', '100000'], {
        env: { ...process.env, TEST_REDIS_URL: REDIS },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`limiter-memory exited ${code}`))));
    });
    log(`limiter memory: ${JSON.stringify(memory)}`);
    rows.push({
      title: 'session-read limiter heap after 1M distinct visitors',
      target: 'slipway auth-service, default limiter',
      heapMB: memory.heapMB,
      keysHeld: memory.keysHeld,
    });
    const lines = [
      `bench/auth — ${new Date().toISOString()} — ${SECONDS}s per endpoint, ${CONNECTIONS} connections, ${ROUNDS} rounds (medians; servers alternate), node ${process.version}, ${(await import('node:os')).cpus().length} CPUs, load average before: ${loadBefore}, after: ${(
        await import('node:os')
      )
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      `hashing: slipway bcrypt cost ${BCRYPT_COST} (default); Better Auth scrypt N=16384 r=16 p=1 (its default)${EQUAL_HASHING ? ` and, for sign-in, Better Auth with bcrypt cost ${BCRYPT_COST} (same native bcrypt package, via emailAndPassword.password)` : ''}. One verification alone (ms, median of 7): ${Object.entries(
        timings,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join('; ')}`,
      '',
      '| endpoint | server | req/s (median) | each round | p99 ms (median) | non-2xx/errors |',
      '|---|---|---:|---|---:|---:|',
      ...rows.filter((r) => r.rps !== undefined).map((r) => `| ${r.title} | ${r.target} | ${r.rps} | ${r.each} | ${r.p99} | ${r.non2xx} |`),
      '',
      `session-read limiter after ${memory.visitors.toLocaleString('en')} distinct visitors, each seen once (AUTH_RATE_LIMIT_SESSION_KEYS=${memory.maxKeys}): ${memory.heapMB} MB heap, ${memory.keysHeld} keys held, ${memory.redisRoundTrips} Redis round trips, ${memory.nsPerDecision} ns per decision`,
      ...endpoints.flatMap((e) => {
        const base = rows.find((r) => r.title === e.title && r.target === targets[1].name);
        const ratios = rows
          .filter((r) => r.title === e.title && r.target.startsWith('slipway'))
          .map(
            (r) =>
              `${e.title}: ${r.target} / Better Auth (stock) throughput = ${(r.rps / Math.max(1, base.rps)).toFixed(2)}×, p99 ${r.p99} ms vs ${base.p99} ms${e.visitors ? ` (goal ≥ 10× and p99 below the peer's: ${r.rps >= 10 * base.rps && r.p99 < base.p99 ? 'met' : 'NOT met'})` : ''}`,
          );
        const equal = targets.find((t) => t.equalHashing);
        const equalRow = equal && rows.find((r) => r.title === e.title && r.target === equal.name);
        const ours = rows.find((r) => r.title === e.title && r.target === targets[0].name);
        const plugins = rows.find((r) => r.title === e.title && r.target === targets.find((t) => t.pluginsOn).name);
        if (plugins && ours)
          ratios.push(
            `${e.title}: every plugin on / plugins off (same server) = ${(plugins.rps / Math.max(1, ours.rps)).toFixed(2)}×, p99 ${plugins.p99} ms vs ${ours.p99} ms`,
          );
        if (equalRow && ours)
          ratios.push(
            `${e.title}: ${ours.target} / ${equal.name} throughput = ${(ours.rps / Math.max(1, equalRow.rps)).toFixed(2)}× (equal hashing: the target is judged on this row)`,
          );
        return ratios;
      }),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify(rows)); // read by bench/run.mjs
    mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
    const stamp = new Date().toISOString().slice(0, 16).replace(':', '');
    if (!onlyList) writeFileSync(new URL(`../results/auth-${stamp}.md`, import.meta.url), `${lines.join('\n')}\n`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await platform.close();
    await dropApplicationDatabase(SERVER, app.id).catch(() => undefined);
    await dropApplicationDatabase(SERVER, pluginsApp.id).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await admin(`DROP DATABASE IF EXISTS ${quoteIdent(platformDb)} WITH (FORCE)`).catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${quoteIdent(betterAuthDb)} WITH (FORCE)`).catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${quoteIdent(betterAuthBcryptDb)} WITH (FORCE)`).catch(() => undefined);
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
