import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { StoredCertificate } from './cert-store.js';

export interface TlsServersInput {
  certs: Pick<StoredCertificate, 'host' | 'certFile' | 'keyFile'>[];
  httpsPort: number;
  /** The HTTP port nginx listens on; hosts with a certificate are redirected there to HTTPS. */
  httpPort: number;
  /** `host:port` of the Node edge (HTTPS requests and ACME challenges are proxied to it). */
  upstream: string;
}

const quoted = (value: string) => {
  if (/["\\\s;{}$]/.test(value)) throw new Error(`refusing to put ${JSON.stringify(value)} in nginx config`);
  return value;
};

/**
 * The nginx `server` blocks of HTTPS (a pure function of the certificates): per host with a
 * certificate, `listen <httpsPort> ssl http2` with its own certificate, and on the HTTP port a
 * redirect to HTTPS (301 for GET/HEAD, 308 otherwise so a form post stays a post) except
 * `/.well-known/acme-challenge/`, which always reaches the edge (renewals are answered over HTTP).
 * A TLS handshake for any other name is refused (`ssl_reject_handshake`): no other host's
 * certificate is ever shown. Hosts without a certificate are not named here: they stay on HTTP.
 */
export function renderTlsServers(input: TlsServersInput): string {
  const { httpsPort, httpPort } = input;
  const upstream = quoted(input.upstream);
  const target = httpsPort === 443 ? 'https://$host$request_uri' : `https://$host:${httpsPort}$request_uri`;
  const out = [
    '# Rendered by the Slipway edge (apps/edge/src/tls/nginx-tls.ts); rewritten on every certificate change.',
    'map $http_upgrade $slipway_tls_connection { default upgrade; "" ""; }',
    'ssl_protocols TLSv1.2 TLSv1.3;',
    'ssl_session_cache shared:slipway_tls:10m;',
    'ssl_session_timeout 1h;',
    `server {\n  listen ${httpsPort} ssl http2 default_server;\n  ssl_reject_handshake on;\n}`,
  ];
  for (const cert of [...input.certs].sort((a, b) => (a.host < b.host ? -1 : 1))) {
    const host = quoted(cert.host);
    out.push(`server {
  listen ${httpsPort} ssl http2;
  server_name ${host};
  ssl_certificate ${quoted(cert.certFile)};
  ssl_certificate_key ${quoted(cert.keyFile)};
  location / {
    proxy_pass http://${upstream};
    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $slipway_tls_connection;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto https;
    proxy_buffering off;
    proxy_request_buffering off;
    client_max_body_size 0;
    proxy_read_timeout 1h;
  }
}
server {
  listen ${httpPort};
  server_name ${host};
  location ${'/.well-known/acme-challenge/'} {
    proxy_pass http://${upstream};
    proxy_set_header Host $http_host;
  }
  location / {
    if ($request_method ~ ^(GET|HEAD)$) { return 301 ${target}; }
    return 308 ${target};
  }
}`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * Writes the rendered servers where nginx includes them (whole, under a temporary name, renamed)
 * and asks nginx to reload (SIGHUP to the pid in its pid file): new workers load the certificate
 * files again (a renewal changes the files, not the text), the old ones finish the connections
 * they have. Without a pid file the text is only written (an nginx started later reads it).
 */
export class NginxTlsInclude {
  constructor(
    private readonly file: string,
    private readonly pidFile: string | undefined,
  ) {}

  async write(text: string): Promise<void> {
    const current = await readFile(this.file, 'utf8').catch(() => undefined);
    if (current !== text) {
      const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, this.file);
    }
    await this.reload();
  }

  private async reload(): Promise<void> {
    if (!this.pidFile) return;
    const text = await readFile(this.pidFile, 'utf8').catch(() => undefined);
    // nginx not started yet: it reads the file when it starts.
    if (text === undefined) return;
    const pid = Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 1) throw new Error(`${this.pidFile} does not hold a process id`);
    process.kill(pid, 'SIGHUP');
  }
}
