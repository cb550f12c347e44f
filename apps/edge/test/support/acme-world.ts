import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startProcess, waitFor, type RunningProcess } from '@slipway/testing';

const run = promisify(execFile);

/**
 * Let's Encrypt's test ACME server (Debian's `pebble`), on loopback: its directory over HTTPS
 * with a CA this test makes (openssl), HTTP-01 checks sent to `httpPort` of the address the given
 * DNS server holds for each name, certificates valid `validitySeconds`.
 */
export class Pebble {
  private constructor(
    private readonly process: RunningProcess,
    readonly directoryUrl: string,
    readonly caFile: string,
    private readonly managementUrl: string,
  ) {}

  static async start(dir: string, options: { dnsServer: string; httpPort: number; validitySeconds: number }): Promise<Pebble> {
    await mkdir(dir, { recursive: true });
    const caKey = join(dir, 'ca.key');
    const caFile = join(dir, 'ca.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      caKey,
      '-out',
      caFile,
      '-days',
      '2',
      '-subj',
      '/CN=slipway test pebble CA',
    ]);
    await run('openssl', [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.csr'),
      '-subj',
      '/CN=127.0.0.1',
    ]);
    await writeFile(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      join(dir, 'cert.csr'),
      '-CA',
      caFile,
      '-CAkey',
      caKey,
      '-CAcreateserial',
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '2',
      '-extfile',
      join(dir, 'ext.cnf'),
    ]);
    const [acmePort, managementPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
    await writeFile(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: join(dir, 'cert.pem'),
          privateKey: join(dir, 'key.pem'),
          httpPort: options.httpPort,
          tlsPort,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
          certificateValidityPeriod: options.validitySeconds,
        },
      }),
    );
    const proc = startProcess('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', options.dnsServer], {
      env: { PATH: process.env['PATH'], PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
    });
    await proc.waitForOutput(/Listening on: 127\.0\.0\.1/, 20_000);
    return new Pebble(proc, `https://127.0.0.1:${acmePort}/dir`, caFile, `https://127.0.0.1:${managementPort}`);
  }

  /** The root of the certificates it issues (made anew at each start). */
  async root(): Promise<string> {
    const ca = await readFile(this.caFile);
    return new Promise((resolve, reject) => {
      request(`${this.managementUrl}/roots/0`, { ca }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`pebble roots: ${res.statusCode}`))));
      })
        .on('error', reject)
        .end();
    });
  }

  output(): string {
    return this.process.output();
  }

  stop(): Promise<void> {
    return this.process.stop('SIGTERM', 5000);
  }
}

/**
 * nginx as the data plane runs it: HTTP on `httpPort` proxied to the edge (the default server),
 * and the edge's rendered TLS servers included from `include`. Reloaded by the edge (SIGHUP).
 */
export class TestNginx {
  private constructor(
    private readonly process: RunningProcess,
    readonly pidFile: string,
    readonly errorLog: string,
  ) {}

  static async start(dir: string, options: { httpPort: number; edgePort: number; include: string }): Promise<TestNginx> {
    await mkdir(dir, { recursive: true });
    const pidFile = join(dir, 'nginx.pid');
    const errorLog = join(dir, 'error.log');
    const conf = `worker_processes 1;
pid ${pidFile};
error_log ${errorLog} info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen ${options.httpPort} default_server;
    location / { proxy_pass http://127.0.0.1:${options.edgePort}; proxy_set_header Host $http_host; }
  }
  include ${options.include};
}
`;
    await writeFile(join(dir, 'nginx.conf'), conf);
    const proc = startProcess('nginx', ['-p', dir, '-e', errorLog, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;']);
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim().length > 0, { timeoutMs: 10_000, what: 'nginx to start' });
    return new TestNginx(proc, pidFile, errorLog);
  }

  async log(): Promise<string> {
    return readFile(this.errorLog, 'utf8').catch(() => '');
  }

  stop(): Promise<void> {
    return this.process.stop('SIGQUIT', 5000);
  }
}
