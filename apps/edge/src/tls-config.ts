import { port, z } from '@slipway/config';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * HTTPS with automatic certificates (docs/guides/https.md), with `EDGE_HTTPS` and `EDGE_HTTPS_PORT`
 * (libs/data-plane `nginxPlaneFields`: nginx listens on it). Everything is optional.
 */
export const tlsConfigFields = {
  /** The ACME directory. Let's Encrypt production by default; its staging directory for trials (docs/guides/https.md). */
  ACME_DIRECTORY_URL: z.url().default('https://acme-v02.api.letsencrypt.org/directory'),
  /** Contact address given to the ACME server (expiry notices); optional. */
  ACME_EMAIL: z.email().optional(),
  /** PEM bundle trusted for the ACME directory's own HTTPS (a private ACME server); the system roots otherwise. */
  ACME_CA_FILE: z.string().optional(),
  /** Account key and certificates (default `<SLIPWAY_HOME>/tls`, made 0700; every file 0600). */
  TLS_DIR: z.string().optional(),
  /** A certificate is renewed once this fraction of its lifetime has passed (2/3: day 60 of 90). */
  ACME_RENEW_FRACTION: z.coerce
    .number()
    .gt(0)
    .lt(1)
    .default(2 / 3),
  /** How often certificates are checked for renewal (and failed issuances looked at again). */
  ACME_CHECK_INTERVAL_MS: ms(60 * 60_000),
  /** Issuances in flight at once; the others wait in the queue. */
  ACME_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** A failed issuance is retried after this delay, doubled per failure up to ACME_RETRY_MAX_MS. */
  ACME_RETRY_MIN_MS: ms(60_000),
  ACME_RETRY_MAX_MS: ms(6 * 60 * 60_000),
  /**
   * The nginx that serves HTTPS: its pid file (SIGHUP = graceful reload: new workers take the new
   * certificates, old ones finish their connections). The edge writes `<TLS_DIR>/nginx-tls.conf`,
   * which that nginx includes in its `http` block.
   */
  EDGE_NGINX_PID_FILE: z.string().optional(),
  /** The HTTP port nginx listens on (ACME's HTTP-01 comes to port 80 of each host; redirects to HTTPS are served there). */
  EDGE_NGINX_HTTP_PORT: port(80),
  /** Where nginx reaches this edge over HTTP (the ACME challenges and every HTTPS request are proxied here). */
  EDGE_NGINX_UPSTREAM: z.string().optional(),
};
