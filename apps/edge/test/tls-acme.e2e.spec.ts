/**
 * HTTPS end to end, never the internet: Debian's `pebble` (Let's Encrypt's test ACME server) on
 * loopback, a TestDnsServer that says every test host is 127.0.0.1, a real edge with
 * EDGE_HTTPS=acme and EDGE_NGINX_PID_FILE, a real worker, and a real nginx that proxies HTTP to
 * the edge and includes the TLS servers the edge renders (and reloads it with SIGHUP).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { publishRoutesChanged } from '@slipway/messaging';
import { DeployHarness, FIXTURES, TestDnsServer, freePort, sourceTar, waitFor } from '@slipway/testing';
import { Pebble, TestNginx } from './support/acme-world.js';

const run = promisify(execFile);
const APPS = 'apps.tls-e2e.test';
const SITE = `site.${APPS}`;
const CUSTOM = 'www.shop-tls-e2e.test';
const BIG = 32 * 1024 * 1024;
const BROKEN = 'www.broken-tls-e2e.test';

interface HostStatus {
  host: string;
  state: string;
  serial: string | null;
  failures: number;
  lastError: string | null;
  notAfter: string | null;
}

/**
 * `include`: nginx run by the operator (here the test) includes `TLS_DIR/nginx-tls.conf` and is
 * reloaded by the edge (EDGE_NGINX_PID_FILE). `plane`: the edge's own nginx data plane
 * (EDGE_DATA_PLANE=nginx) renders the HTTPS servers into its config.
 */
// This file runs both nginx modes itself; the edge's second test pass (EDGE_DATA_PLANE=nginx in the environment) skips it.
const suite = process.env['EDGE_DATA_PLANE'] === 'nginx' ? describe.skip : describe;

suite.each([['include' as const], ['plane' as const]])('HTTPS over ACME (pebble, nginx, real edge and worker), nginx mode %s', (mode) => {
  let h: DeployHarness;
  let dns: TestDnsServer;
  let pebble: Pebble;
  let nginx: TestNginx | undefined;
  let nginxPidFile: string;
  let root: string;
  let edgePort: number;
  let httpPort: number;
  let httpsPort: number;
  let appId: string;
  let tlsDir: string;

  const internal = async <T>(path: string): Promise<T> => {
    const res = await fetch(`http://127.0.0.1:${edgePort}${path}`, { headers: { authorization: `Bearer ${await edgeToken()}` } });
    return (await res.json()) as T;
  };
  const edgeToken = async () => (await import('@slipway/messaging')).edgeInternalToken(h.masterKey);
  const hostStatus = async (host: string) => (await internal<{ hosts: HostStatus[] }>('/_slipway/tls')).hosts.find((s) => s.host === host);

  /** A TLS handshake with SNI and ALPN against nginx's HTTPS port, verified with pebble's root. */
  const handshake = (servername: string, verify = true) =>
    new Promise<{ alpn: string | false; cert: PeerCertificate }>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: httpsPort, servername, ca: root, ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: verify },
        () => {
          resolve({ alpn: socket.alpnProtocol ?? false, cert: socket.getPeerCertificate() });
          socket.end();
        },
      );
      socket.on('error', reject);
    });

  const http = (host: string, path: string, method = 'GET') =>
    new Promise<{ status: number; location?: string; body: string }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: httpPort, path, method, headers: { host } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
      })
        .on('error', reject)
        .end();
    });

  const h2get = (session: ClientHttp2Session, host: string, path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const stream = session.request({ ':path': path, ':authority': host });
      let status = 0;
      let body = '';
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (c: Buffer) => (body += c.toString()));
      stream.on('end', () => resolve({ status, body }));
      stream.on('error', reject);
      stream.end();
    });

  const h2session = (host: string) => h2connect(`https://127.0.0.1:${httpsPort}`, { ca: root, servername: host });

  const workers = async () => {
    const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', (await readFile(nginxPidFile, 'utf8')).trim()]);
    return stdout
      .trim()
      .split('\n')
      .map((line) => ({ pid: Number(line.trim().split(/\s+/)[0]), args: line.trim() }));
  };

  /**
   * After a reload a new connection can still meet an old worker (old config) until it takes the
   * quit signal: wait until only the new worker accepts (one worker not shutting down).
   */
  const nginxSettled = () =>
    waitFor(async () => (await workers()).filter((w) => /worker process$/.test(w.args)).length === 1, {
      timeoutMs: 10_000,
      what: 'nginx to finish its reload',
    });

  beforeAll(async () => {
    h = await DeployHarness.create(`tls-e2e-${mode}`);
    dns = await TestDnsServer.start();
    for (const host of [SITE, CUSTOM]) dns.setAddress(host, '127.0.0.1');
    [edgePort, httpPort, httpsPort] = [await freePort(), await freePort(), await freePort()];
    // 30 s certificates renewed at half their life: a renewal happens within the test.
    pebble = await Pebble.start(join(h.home, 'pebble'), { dnsServer: dns.address, httpPort, validitySeconds: 30 });
    root = await pebble.root();
    tlsDir = join(h.home, 'tls');
    const acme = {
      APPS_DOMAIN: APPS,
      EDGE_HTTPS: 'acme',
      EDGE_HTTPS_PORT: String(httpsPort),
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      ACME_EMAIL: 'ops@tls-e2e.test',
      ACME_RENEW_FRACTION: '0.5',
      ACME_CHECK_INTERVAL_MS: '1000',
      ACME_RETRY_MIN_MS: '1000',
      ACME_RETRY_MAX_MS: '4000',
    };
    if (mode === 'include') {
      nginxPidFile = join(h.home, 'nginx', 'nginx.pid');
      await h.startEdge(edgePort, { ...acme, EDGE_DATA_PLANE: 'node', EDGE_NGINX_HTTP_PORT: String(httpPort), EDGE_NGINX_PID_FILE: nginxPidFile });
      nginx = await TestNginx.start(join(h.home, 'nginx'), { httpPort, edgePort, include: join(tlsDir, 'nginx-tls.conf') });
    } else {
      // nginx listens on the public port (HTTP-01 comes there); the Node edge behind it.
      edgePort = httpPort;
      nginxPidFile = join(h.home, 'runtime', 'nginx', 'nginx.pid');
      await h.startEdge(httpPort, { ...acme, EDGE_DATA_PLANE: 'nginx' });
    }
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: APPS });
    appId = await h.createApplication({ slug: 'site' });
    const row = await h.waitForFinal(await h.deploy(appId, await sourceTar(join(FIXTURES, 'static-site'), { 'big.dat': 'b'.repeat(BIG) })));
    if (row.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(row.error)}`);
  }, 180_000);

  afterAll(async () => {
    await nginx?.stop();
    await h?.close();
    await pebble?.stop();
    await dns?.close();
  });

  it('issues a certificate for the application address: SNI handshake verifies with the ACME root, HTTP/2 over ALPN', async () => {
    await waitFor(async () => (await hostStatus(SITE))?.state === 'valid', { timeoutMs: 60_000, what: `a certificate for ${SITE}` });
    await waitFor(async () => handshake(SITE).catch(() => undefined), { timeoutMs: 10_000, what: 'nginx to serve it' });
    await nginxSettled();
    const { alpn, cert } = await handshake(SITE);
    expect(alpn).toBe('h2');
    expect(cert.subjectaltname).toBe(`DNS:${SITE}`);
    if (mode === 'plane') {
      // nginx serves the static release over HTTPS itself (the site's own server, its tree as root), not through the Node edge.
      const conf = await readFile(join(h.home, 'runtime', 'nginx', 'nginx.conf'), 'utf8');
      expect(conf).toMatch(
        new RegExp(
          `listen [^;]+:${httpsPort} ssl http2;\\s+server_name ${SITE.replace(/\./g, '\\.')};\\s+(?:access_log [^;]+;\\s+)*ssl_certificate [^;]+bundle\\.pem\\$slipway_tls_lazy;[^}]*?root /`,
        ),
      );
    }
    const session = h2session(SITE);
    try {
      const home = await h2get(session, SITE, '/');
      expect(home.status).toBe(200);
      expect(home.body).toContain('static fixture home');
    } finally {
      session.close();
    }
  }, 90_000);

  it('redirects HTTP to HTTPS where a certificate exists (301 GET, 308 otherwise), never the ACME path, and keeps other hosts on HTTP', async () => {
    await waitFor(async () => (await hostStatus(SITE))?.state === 'valid', { timeoutMs: 60_000, what: SITE });
    await waitFor(async () => (await http(SITE, '/')).status === 301, { timeoutMs: 10_000, what: 'nginx to take the certificate' });
    await nginxSettled();
    expect(await http(SITE, '/about/?x=1')).toMatchObject({ status: 301, location: `https://${SITE}:${httpsPort}/about/?x=1` });
    expect(await http(SITE, '/form', 'POST')).toMatchObject({ status: 308, location: `https://${SITE}:${httpsPort}/form` });
    // A token no order is waiting for: the edge answers (404), nginx does not redirect.
    expect((await http(SITE, '/.well-known/acme-challenge/not-a-token')).status).toBe(404);
    // No certificate for this host: served over HTTP as before (the edge's own 404 page).
    const other = await http('nobody.apps.tls-e2e.test', '/');
    expect([other.status, other.location, other.body]).toEqual([404, undefined, expect.stringContaining('There is no application at this address.')]);
    // Refused outright (not another host's certificate), even to a client that checks nothing.
    await expect(handshake('nobody.apps.tls-e2e.test', false)).rejects.toThrow(/unrecognized name|alert/i);
  }, 90_000);

  it('retries a failed order with backoff and shows why, while the host stays on HTTP', async () => {
    // A verified domain whose address the DNS does not know: the ACME server cannot check the challenge.
    const host = BROKEN;
    await h.pg.query(`INSERT INTO domains (application_id, hostname, verification_token, verified_at) VALUES ($1, $2, 'tok', now())`, [appId, host]);
    await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
    const failed = await waitFor(
      async () => {
        const status = await hostStatus(host);
        return status && status.failures >= 2 ? status : undefined;
      },
      { timeoutMs: 60_000, what: `two failed orders for ${host}` },
    );
    expect(failed).toMatchObject({ state: expect.stringMatching(/^(retrying|queued|issuing)$/), serial: null, lastError: expect.any(String) });
    expect(failed.lastError!.length).toBeGreaterThan(0);
    expect((await http(host, '/')).status).toBe(200);
    await expect(handshake(host)).rejects.toThrow();
    await h.pg.query(`DELETE FROM domains WHERE hostname = $1`, [host]);
    await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
    await waitFor(async () => (await hostStatus(host)) === undefined, { timeoutMs: 10_000, what: 'the host to be forgotten' });
  }, 90_000);

  it("keeps keys and certificates root-only (0700 directories, 0600 files; with the plane, only nginx's workers' group also reads bundle.pem); another user cannot read them", async () => {
    await waitFor(async () => (await hostStatus(SITE))?.state === 'valid', { timeoutMs: 60_000, what: SITE });
    const paths = { dir: tlsDir, certs: join(tlsDir, 'certs'), host: join(tlsDir, 'certs', SITE) };
    // The plane's workers run as NGINX_USER (slipway-edge) and load bundle.pem at each handshake: its group may pass and read that file alone.
    const workers = mode === 'plane' ? Number((await run('id', ['-g', 'slipway-edge'])).stdout.trim()) : 0;
    const dirMode = mode === 'plane' ? 0o710 : 0o700;
    for (const [what, path] of Object.entries(paths)) {
      const info = await stat(path);
      expect([what, info.mode & 0o777, info.uid, info.gid]).toEqual([what, dirMode, 0, workers]);
    }
    for (const file of [join(tlsDir, 'account.key'), join(paths.host, 'key.pem'), join(paths.host, 'cert.pem'), join(paths.host, 'bundle.pem')]) {
      const bundle = mode === 'plane' && file.endsWith('bundle.pem');
      const info = await stat(file);
      expect([file, info.mode & 0o777, info.uid, info.gid]).toEqual([file, bundle ? 0o640 : 0o600, 0, bundle ? workers : 0]);
      // As an application's user would try (any uid that is not root).
      const attempt = await run('setpriv', ['--reuid=200777', '--regid=200777', '--clear-groups', 'cat', file]).then(
        () => 'read',
        (error: { stderr?: string }) => error.stderr ?? 'failed',
      );
      expect(attempt).toMatch(/Permission denied/);
    }
  }, 90_000);

  it('serves a verified custom domain over HTTPS, then drops its route and certificate when verification lapses', async () => {
    await h.pg.query(`INSERT INTO domains (application_id, hostname, verification_token, verified_at) VALUES ($1, $2, 'tok', now())`, [appId, CUSTOM]);
    await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
    await waitFor(async () => (await hostStatus(CUSTOM))?.state === 'valid', { timeoutMs: 60_000, what: `a certificate for ${CUSTOM}` });
    await waitFor(async () => handshake(CUSTOM).catch(() => undefined), { timeoutMs: 10_000, what: 'nginx to serve the custom domain' });
    await nginxSettled();
    const { alpn, cert } = await handshake(CUSTOM);
    expect([alpn, cert.subjectaltname]).toEqual(['h2', `DNS:${CUSTOM}`]);
    // The redirect server came with the same reload (a connection may still meet an old worker for a moment).
    await waitFor(async () => (await http(CUSTOM, '/')).status === 301, { timeoutMs: 5000, what: 'the HTTPS redirect' });

    // What the gateway's re-check does once the TXT record has been missing N times: unverify, announce.
    await h.pg.query(`UPDATE domains SET verified_at = NULL WHERE hostname = $1`, [CUSTOM]);
    await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
    await waitFor(
      async () =>
        (await hostStatus(CUSTOM)) === undefined &&
        !(await stat(join(tlsDir, 'certs', CUSTOM)).then(
          () => true,
          () => false,
        )),
      { timeoutMs: 10_000, what: 'the certificate to be removed' },
    );
    await waitFor(
      async () =>
        handshake(CUSTOM).then(
          () => undefined,
          () => true,
        ),
      { timeoutMs: 10_000, what: 'nginx to stop serving it' },
    );
    await nginxSettled();
    // Right after a reload a connection may still meet the old worker for a moment.
    const plain = await waitFor(
      async () => {
        const reply = await http(CUSTOM, '/');
        return reply.status === 301 ? undefined : reply;
      },
      { timeoutMs: 5000, what: 'the redirect to go' },
    );
    expect([plain.status, plain.location, plain.body]).toEqual([404, undefined, expect.stringContaining('There is no application at this address.')]);
    // The application address is untouched.
    expect((await handshake(SITE)).alpn).toBe('h2');
  }, 120_000);

  it('renews before expiry: a new serial after the renewal window, a download in flight finishes, no request fails', async () => {
    await waitFor(async () => (await hostStatus(SITE))?.serial ?? undefined, { timeoutMs: 60_000, what: SITE });
    const servedBefore = (await handshake(SITE)).cert.serialNumber;
    const workersBefore = await workers();
    // A 32 MiB download (more than the socket buffers hold) started before the renewal and held, unread, until the
    // renewed certificate is served and the workers have been looked at: the reload happens with the transfer in flight.
    let readRest: (() => Promise<number>) | undefined;
    await new Promise<void>((started, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: httpsPort, path: '/big.dat', servername: SITE, headers: { host: SITE }, ca: root, agent: false },
        (res) => {
          res.pause();
          readRest = () =>
            new Promise<number>((resolve, failed) => {
              let bytes = 0;
              res.on('data', (c: Buffer) => (bytes += c.length));
              res.on('end', () => resolve(bytes));
              res.on('error', failed);
              res.resume();
            });
          started();
        },
      );
      req.on('error', reject);
      req.end();
    });
    const failures: string[] = [];
    let requests = 0;
    // Plane: one keep-alive connection reused across the renewal (a reload would close it under the client).
    const agent = mode === 'plane' ? new Agent({ keepAlive: true, maxSockets: 1, ca: root, servername: SITE }) : false;
    let renewed = false;
    const load = (async () => {
      for (let i = 0; i < 400 && !renewed; i++) {
        requests++;
        await new Promise<void>((resolve) => {
          httpsRequest({ host: '127.0.0.1', port: httpsPort, path: '/', servername: SITE, headers: { host: SITE }, ca: root, agent }, (res) => {
            if (res.statusCode !== 200) failures.push(`status ${res.statusCode}`);
            res.resume().on('end', () => resolve());
          })
            .on('error', (error) => {
              failures.push(error.message);
              resolve();
            })
            .end();
        });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const servedAfter = await waitFor(
      async () => {
        const serial = (await handshake(SITE)).cert.serialNumber;
        return serial !== servedBefore ? serial : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'a renewed certificate to be served' },
    );
    renewed = true;
    const workersAfter = await workers();
    if (mode === 'include') {
      // The reload kept the download's connection: its worker is still there, finishing it.
      expect(workersAfter.map((w) => w.args).join('\n')).toContain('worker process is shutting down');
    } else {
      // The plane reads certificates at each handshake: a renewal reloads nothing (same workers).
      expect(workersAfter.map((w) => w.pid)).toEqual(workersBefore.map((w) => w.pid));
    }
    const downloaded = await readRest!();
    await load;
    if (agent) agent.destroy();
    expect(servedAfter).not.toBe(servedBefore);
    expect(downloaded).toBe(BIG);
    expect({ requests: requests > 0, failures }).toEqual({ requests: true, failures: [] });
  }, 120_000);
});
