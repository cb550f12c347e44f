/**
 * The certificate manager's queue, backoff, renewal and removal over a real CertStore on disk,
 * with real certificates (openssl). The ACME side is the e2e's (test/tls-acme.e2e.spec.ts); here
 * the issuer is a function the test controls, so that it can hold orders open and make them fail.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@slipway/testing';
import { CertStore, type StoredCertificate } from './cert-store.js';
import { CertificateManager, type CertificateManagerOptions } from './certificate-manager.js';

const run = promisify(execFile);

/** A real key and self-signed certificate for `host`, valid one day from now. */
async function selfSigned(dir: string, host: string): Promise<{ key: Buffer; certificatePem: string }> {
  const base = join(dir, `${host}-${Math.random().toString(36).slice(2)}`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${base}.key`,
    '-out',
    `${base}.pem`,
    '-days',
    '1',
    '-subj',
    `/CN=${host}`,
    '-addext',
    `subjectAltName=DNS:${host}`,
  ]);
  return { key: await readFile(`${base}.key`), certificatePem: await readFile(`${base}.pem`, 'utf8') };
}

describe('CertificateManager (real store, real certificates)', () => {
  let dir: string;
  let scratch: string;
  let manager: CertificateManager | undefined;
  const applied: StoredCertificate[][] = [];
  const options: CertificateManagerOptions = { concurrency: 2, renewFraction: 2 / 3, checkIntervalMs: 60_000, retryMinMs: 100, retryMaxMs: 400 };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-certs-'));
    scratch = await mkdtemp(join(tmpdir(), 'slipway-certs-scratch-'));
    applied.length = 0;
  });
  afterEach(async () => {
    manager?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  const start = async (issue: (host: string) => Promise<{ key: Buffer; certificatePem: string }>, overrides: Partial<CertificateManagerOptions> = {}) => {
    const store = new CertStore(dir);
    await store.init();
    manager = new CertificateManager(store, issue, async (certs) => void applied.push(certs), { ...options, ...overrides });
    manager.start();
    return { store, manager };
  };

  it('issues every host with at most `concurrency` orders at once, stores them 0600 and hands them all to the data plane', async () => {
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const { manager } = await start(async (host) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => gates.push(resolve));
      const cert = await selfSigned(scratch, host);
      inFlight--;
      return cert;
    });
    const hosts = ['a.example.test', 'b.example.test', 'c.example.test', 'd.example.test', 'e.example.test'];
    await manager.setHosts(hosts);
    for (let released = 0; released < hosts.length; released++) {
      await waitFor(() => gates.length > 0, { what: 'an order in flight' });
      expect(inFlight).toBeLessThanOrEqual(2);
      gates.shift()!();
    }
    await waitFor(() => manager.status().every((s) => s.state === 'valid'), { timeoutMs: 20_000, what: 'every certificate' });
    await manager.settled();
    expect(most).toBe(2);
    expect(
      applied
        .at(-1)!
        .map((c) => c.host)
        .sort(),
    ).toEqual(hosts);
    for (const host of hosts) {
      expect((await stat(join(dir, 'certs', host, 'key.pem'))).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'certs', host))).mode & 0o777).toBe(0o700);
    }
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  }, 30_000);

  it('retries a failing order with a doubling delay up to the maximum, shows why, and recovers', async () => {
    let failing = true;
    let attempts = 0;
    const { manager } = await start(async (host) => {
      attempts++;
      if (failing) throw new Error(`urn:ietf:params:acme:error:connection: ${host} did not answer the challenge`);
      return selfSigned(scratch, host);
    });
    await manager.setHosts(['flaky.example.test']);
    const delays: number[] = [];
    await waitFor(
      () => {
        const [s] = manager.status();
        if (s && s.failures > delays.length) delays.push(s.retryDelayMs!);
        return (s?.failures ?? 0) >= 4;
      },
      { timeoutMs: 20_000, intervalMs: 5, what: 'four failures' },
    );
    const [failed] = manager.status();
    expect(failed).toMatchObject({ host: 'flaky.example.test', serial: null, failures: 4, lastError: expect.stringContaining('did not answer the challenge') });
    expect(failed!.retryDelayMs).toBe(400);
    expect(delays).toEqual([100, 200, 400, 400]);
    failing = false;
    const valid = await waitFor(() => manager.status().find((s) => s.state === 'valid'), { timeoutMs: 20_000, what: 'the order to succeed' });
    expect(valid).toMatchObject({ failures: 0, lastError: null, retryDelayMs: null });
    expect(attempts).toBeGreaterThanOrEqual(5);
  }, 30_000);

  it('renews once the fraction of the lifetime has passed, keeping the old certificate until the new one is stored', async () => {
    const serials: string[] = [];
    // A one-day certificate at a fraction of a millionth: due again within a tenth of a second.
    const { manager } = await start(async (host) => selfSigned(scratch, host), { renewFraction: 0.000001, checkIntervalMs: 50 });
    await manager.setHosts(['renew.example.test']);
    await waitFor(
      () => {
        const serial = manager.status()[0]?.serial;
        if (serial && serials.at(-1) !== serial) serials.push(serial);
        return serials.length >= 3;
      },
      { timeoutMs: 20_000, intervalMs: 5, what: 'two renewals' },
    );
    expect(new Set(serials).size).toBe(serials.length);
    expect(manager.status()[0]!.state).toMatch(/^(valid|renewing|queued)$/);
  }, 30_000);

  it('drops a host that is no longer given: files removed (also those left from before a restart), data plane told', async () => {
    const { manager, store } = await start(async (host) => selfSigned(scratch, host));
    // Left on disk by an earlier run for a host no one serves any more.
    const stale = await selfSigned(scratch, 'stale.example.test');
    await store.save('stale.example.test', stale.key, stale.certificatePem);
    await manager.setHosts(['keep.example.test', 'drop.example.test']);
    await waitFor(() => manager.status().filter((s) => s.state === 'valid').length === 2, { timeoutMs: 20_000, what: 'both certificates' });
    expect(await store.exists('stale.example.test')).toBe(false);
    await manager.setHosts(['keep.example.test']);
    await manager.settled();
    expect(await store.exists('drop.example.test')).toBe(false);
    expect(manager.status().map((s) => s.host)).toEqual(['keep.example.test']);
    expect(applied.at(-1)!.map((c) => c.host)).toEqual(['keep.example.test']);
    // Reloaded from disk by a new manager (an edge restart): no new order for a valid certificate.
    manager.close();
    let orders = 0;
    const again = new CertificateManager(
      store,
      async (host) => (orders++, selfSigned(scratch, host)),
      async () => undefined,
      options,
    );
    await again.setHosts(['keep.example.test']);
    expect(again.status()[0]).toMatchObject({ host: 'keep.example.test', state: 'valid' });
    expect(orders).toBe(0);
    again.close();
  }, 30_000);
});
