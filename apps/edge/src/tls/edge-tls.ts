import { join, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { nginxWorker, type TlsInput } from '@slipway/data-plane';
import type { LiveRoute } from '@slipway/platform-data';
import type { EdgeConfig } from '../config.js';
import { AcmeIssuer, ChallengeResponder } from './acme-issuer.js';
import { CertStore, isCertifiableHost } from './cert-store.js';
import { CertificateManager, type HostTlsStatus } from './certificate-manager.js';
import { NginxTlsInclude, renderTlsServers } from './nginx-tls.js';

/** The hosts that get a certificate: every address of an application with a live release, and its verified custom domains. */
export function certificateHosts(routes: Iterable<LiveRoute>, appsDomains: string[]): string[] {
  const domains = appsDomains.map((d) => d.replace(/:\d+$/, '').toLowerCase());
  const hosts = new Set<string>();
  for (const route of routes) {
    if (!route.release) continue;
    for (const host of [...domains.map((d) => `${route.slug}.${d}`), ...route.hostnames]) if (isCertifiableHost(host)) hosts.add(host);
  }
  return [...hosts];
}

/**
 * EDGE_HTTPS=acme: the ACME account and certificates under TLS_DIR, the HTTP-01 answers, and the
 * nginx servers that terminate TLS (docs/decisions/https-acme.md).
 */
export class EdgeTls {
  readonly challenges = new ChallengeResponder();
  private manager?: CertificateManager;

  private constructor(private readonly config: EdgeConfig) {}

  /**
   * `plane`: the nginx data plane renders the HTTPS servers into its own config (EDGE_DATA_PLANE=nginx).
   * Without it the servers go to `TLS_DIR/nginx-tls.conf` for an nginx the operator runs (EDGE_NGINX_PID_FILE).
   */
  static async start(config: EdgeConfig, plane?: { setTls(tls: TlsInput | undefined): Promise<void> }): Promise<EdgeTls> {
    const tls = new EdgeTls(config);
    const dir = resolve(config.TLS_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'tls'));
    // The nginx plane's workers (unprivileged when the edge is root) load each bundle at the handshake.
    const store = new CertStore(dir, plane && process.getuid?.() === 0 ? await nginxWorker(config.NGINX_USER) : undefined);
    await store.init();
    const accountKey = await store.accountKey(() => AcmeIssuer.createAccountKey());
    const issuer = await AcmeIssuer.create(
      { directoryUrl: config.ACME_DIRECTORY_URL, email: config.ACME_EMAIL, caFile: config.ACME_CA_FILE, accountKey },
      tls.challenges,
    );
    const include = new NginxTlsInclude(join(dir, 'nginx-tls.conf'), config.EDGE_NGINX_PID_FILE);
    const upstream = config.EDGE_NGINX_UPSTREAM ?? `127.0.0.1:${config.PORT}`;
    tls.manager = new CertificateManager(
      store,
      (host) => issuer.issue(host),
      async (certs) => {
        if (plane)
          await plane.setTls({
            httpsPort: config.EDGE_HTTPS_PORT,
            redirectHttp: true,
            certificates: certs.map((c) => ({ hosts: [c.host], certificate: c.bundleFile, key: c.bundleFile })),
          });
        else await include.write(renderTlsServers({ certs, httpsPort: config.EDGE_HTTPS_PORT, httpPort: config.EDGE_NGINX_HTTP_PORT, upstream }));
      },
      {
        concurrency: config.ACME_CONCURRENCY,
        renewFraction: config.ACME_RENEW_FRACTION,
        checkIntervalMs: config.ACME_CHECK_INTERVAL_MS,
        retryMinMs: config.ACME_RETRY_MIN_MS,
        retryMaxMs: config.ACME_RETRY_MAX_MS,
      },
    );
    // The include exists from the start (no certificate yet: only the handshake-refusing default), so nginx can include it.
    if (plane) await plane.setTls({ httpsPort: config.EDGE_HTTPS_PORT, redirectHttp: true, certificates: [] });
    else
      await include
        .write(renderTlsServers({ certs: [], httpsPort: config.EDGE_HTTPS_PORT, httpPort: config.EDGE_NGINX_HTTP_PORT, upstream }))
        .catch((error: Error) => new Logger('tls').warn(`nginx not reloaded: ${error.message}`));
    tls.manager.start();
    new Logger('tls').log(`HTTPS on port ${config.EDGE_HTTPS_PORT}: certificates from ${config.ACME_DIRECTORY_URL}, kept in ${dir}`);
    return tls;
  }

  /** Called with the whole routing table after every change. */
  routesChanged(routes: Iterable<LiveRoute>): void {
    void this.manager
      ?.setHosts(certificateHosts(routes, this.config.APPS_DOMAIN))
      .catch((error: Error) => new Logger('tls').error(`certificate hosts not updated: ${error.message}`));
  }

  status(): { mode: 'acme'; directory: string; hosts: HostTlsStatus[] } {
    return { mode: 'acme', directory: this.config.ACME_DIRECTORY_URL, hosts: this.manager?.status() ?? [] };
  }

  close(): void {
    this.manager?.close();
  }
}
