import { fileURLToPath } from 'node:url';
import { CLIENT_ADDRESS_HEADER, signClientAddress } from '@slipway/sign-in-sdk';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { freePort, startProcess, waitFor, type RunningProcess } from '@slipway/testing';
import { LOCAL_SHARE } from '../src/pipeline/batched-window-limiter.js';
import { originOf, startAuthHarness, type AuthHarness } from './harness.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const MAX = 100;

/**
 * Two real auth-service processes sharing one Redis prefix, each visitor vouched for by the signed
 * client-address header: the per-visitor session-read limiter's documented guarantee (at most
 * max + R × share reads of one visitor per window with R replicas) and its cost for new visitors.
 */
describe('session-read limiter across two replicas (real processes, Redis)', () => {
  let h: AuthHarness;
  let secret: string;
  const replicas: { url: string; process: RunningProcess }[] = [];
  const slug = 'visitors';

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
      // A window far longer than the test, so it never straddles a boundary.
      AUTH_RATE_LIMIT_SESSION_MAX: String(MAX),
      AUTH_RATE_LIMIT_SESSION_WINDOW_SECONDS: '3600',
      AUTH_TENANT_CACHE_SECONDS: '0',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };
    const running = startProcess(process.execPath, [MAIN], { env });
    await waitFor(async () => (await fetch(`${url}/health/ready`)).ok, { timeoutMs: 30_000, what: `replica on ${port} to be ready` });
    return { url, process: running };
  }

  beforeAll(async () => {
    h = await startAuthHarness('authlimitreplicas');
    const tenant = await h.createTenant(slug);
    const row = await h.prisma.signInService.findUniqueOrThrow({ where: { applicationId: tenant.applicationId } });
    secret = decryptEnvelopeToString(keyringFromMasterKey(h.config.SLIPWAY_MASTER_KEY), row.cookieSecret, envelopeBinding.cookieSecret(tenant.applicationId));
    replicas.push(await startReplica(), await startReplica());
  }, 60_000);

  afterAll(async () => {
    for (const r of replicas) await r.process.stop();
    await h?.close();
  });

  const read = (base: string, address: string) =>
    fetch(`${base}/a/${slug}/get-session`, { headers: { origin: originOf(slug), [CLIENT_ADDRESS_HEADER]: signClientAddress(secret, address) } }).then(
      (r) => r.status,
    );

  it('lets one visitor hammering both replicas at once through at most max + 2 × share reads', async () => {
    const address = '203.0.113.7';
    // Each replica gets 1.5 × max reads, 5 at a time, both at once.
    const hammer = async (base: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < (MAX * 3) / 2; i += 5) statuses.push(...(await Promise.all([0, 1, 2, 3, 4].map(() => read(base, address)))));
      return statuses;
    };
    const all = (await Promise.all(replicas.map((r) => hammer(r.url)))).flat();
    expect(all.every((s) => s === 200 || s === 429)).toBe(true);
    const admitted = all.filter((s) => s === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(MAX);
    expect(admitted).toBeLessThanOrEqual(MAX + replicas.length * Math.floor(LOCAL_SHARE * MAX));
    // Once synchronised, both replicas refuse that visitor.
    await waitFor(async () => (await read(replicas[0]!.url, address)) === 429 && (await read(replicas[1]!.url, address)) === 429, {
      timeoutMs: 5000,
      what: 'both replicas to refuse',
    });
  });

  it('admits every new visitor on either replica (their allowances are their own)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push(await read(replicas[i % 2]!.url, `198.51.100.${i}`));
    expect(statuses).toEqual(Array(200).fill(200));
  });
});
