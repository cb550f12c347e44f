/**
 * HTTPS: a certificate per set of hosts (key and certificate may be one file), the port to
 * listen on, and whether plain HTTP redirects to HTTPS for those hosts.
 */
export interface TlsInput {
  httpsPort: number;
  redirectHttp: boolean;
  certificates: { hosts: string[]; certificate: string; key: string }[];
}

/** HTTP-01 challenges always reach the Node edge (it answers the tokens of its own orders). */
export const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

const HOST_NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;
const PATH = /^\/[A-Za-z0-9._/-]*$/;

function checked(condition: boolean, what: string): void {
  if (!condition) throw new Error(`nginx config: ${what}`);
}

export interface SiteTlsPlan {
  /** Hosts of the site served on the HTTP port as before (no certificate yet, or no redirect). */
  httpHosts: string[];
  /** One HTTPS server per certificate that covers some of the site's hosts. */
  https: { hosts: string[]; directives: string }[];
}

/**
 * The certificate is read by the worker at each full handshake (the path holds a variable, always
 * empty): a renewal replaces the file and needs no reload, so no idle keep-alive connection is
 * closed for it. Key and certificate are one file, replaced by one rename: never a mismatched pair.
 */
function sslDirectives(cert: TlsInput['certificates'][number], indent: string): string {
  checked(PATH.test(cert.certificate) && PATH.test(cert.key), `certificate paths must be plain paths (${cert.certificate})`);
  return `${indent}ssl_certificate ${cert.certificate}$slipway_tls_lazy;\n${indent}ssl_certificate_key ${cert.key}$slipway_tls_lazy;\n`;
}

/** How one site's hosts split between HTTP and HTTPS servers. */
export function siteTlsPlan(tls: TlsInput | undefined, hosts: string[]): SiteTlsPlan {
  if (!tls) return { httpHosts: hosts, https: [] };
  const https: SiteTlsPlan['https'] = [];
  const covered = new Set<string>();
  for (const cert of tls.certificates) {
    const mine = cert.hosts.filter((h) => hosts.includes(h) && !covered.has(h));
    if (!mine.length) continue;
    for (const h of mine) covered.add(h);
    https.push({ hosts: mine, directives: sslDirectives(cert, '    ') });
  }
  return { httpHosts: tls.redirectHttp ? hosts.filter((h) => !covered.has(h)) : hosts, https };
}

/** The ACME location every HTTP site server gets when HTTPS is on (before the site's own locations). */
export function acmeLocation(fallbackHeaders: string): string {
  return `    location ^~ ${ACME_CHALLENGE_PATH} {\n      proxy_pass http://slipway_edge;\n${fallbackHeaders}\n    }\n`;
}

/**
 * The HTTPS part of the http block: TLS settings, a default HTTPS server that refuses the
 * handshake for any name without a certificate (no other host's certificate is ever shown), the
 * redirect of every host with a certificate from HTTP to HTTPS (301 for GET/HEAD, 308 otherwise;
 * never the ACME path), and HTTPS for hosts with a certificate that no site server holds (apps
 * starting, hosts nginx cannot serve): the Node edge answers them as it does on HTTP.
 */
export function renderTlsGlobal(tls: TlsInput, listen: { http: string; https: string }, siteHosts: Set<string>, fallbackHeaders: string): string {
  checked(Number.isInteger(tls.httpsPort) && tls.httpsPort > 0 && tls.httpsPort < 65536, `bad HTTPS port ${tls.httpsPort}`);
  const all = [...new Set(tls.certificates.flatMap((c) => c.hosts))].sort();
  for (const h of all) checked(HOST_NAME.test(h), `certificate host ${JSON.stringify(h)} is not a lower-case DNS name`);
  const target = tls.httpsPort === 443 ? 'https://$host$request_uri' : `https://$host:${tls.httpsPort}$request_uri`;
  const out = [
    `  map $ssl_server_name $slipway_tls_lazy { default ""; }`,
    '  ssl_protocols TLSv1.2 TLSv1.3;',
    '  ssl_session_cache shared:slipway_tls:10m;',
    '  ssl_session_timeout 1h;',
    `  server {\n    listen ${listen.https} ssl http2 default_server;\n    ssl_reject_handshake on;\n  }`,
  ];
  if (tls.redirectHttp && all.length) {
    out.push(`  server {
    listen ${listen.http};
    server_name ${all.join(' ')};
${acmeLocation(fallbackHeaders)}    location / {
      if ($request_method ~ ^(GET|HEAD)$) { return 301 ${target}; }
      return 308 ${target};
    }
  }`);
  }
  for (const cert of tls.certificates) {
    const orphans = cert.hosts.filter((h) => !siteHosts.has(h));
    if (!orphans.length) continue;
    out.push(`  server {
    listen ${listen.https} ssl http2;
    server_name ${orphans.join(' ')};
${sslDirectives(cert, '    ')}    location / {
      proxy_pass http://slipway_edge;
${fallbackHeaders}
      proxy_set_header X-Forwarded-Proto https;
    }
  }`);
  }
  return `${out.join('\n')}\n`;
}
