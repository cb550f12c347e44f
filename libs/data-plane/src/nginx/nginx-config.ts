/**
 * The nginx data plane's configuration, rendered from the edge's route table: a pure function
 * from a typed input to the text of `nginx.conf` (no file system, no clock). The Node edge (the
 * control plane) writes it, validates it with `nginx -t` and reloads nginx (see nginx-plane.ts).
 *
 * Per live host nginx either proxies to the Node release (keep-alive upstream, HTTP/1.1,
 * websockets) or serves the static release from its nginx tree (static-tree.ts); everything else
 * (unknown hosts, apps starting, the internal API, health) is proxied to the Node edge.
 */

import { FINGERPRINTED as FINGERPRINTED_NAMES } from '../static/fingerprinted.js';
import { acmeLocation, renderTlsGlobal, siteTlsPlan, type TlsInput } from './nginx-tls-sites.js';

export interface Address {
  host: string;
  port: number;
}

/** A Node release, reached on the loopback. */
/** How long after a marker flip every nginx worker routes by it (open_file_cache_valid, whole seconds). */
export const SLOT_SWITCH_MS = 1000;

export interface ProxySite {
  kind: 'proxy';
  /** Stable name of the upstream blocks (one site per application), `[a-z0-9_]` only. */
  id: string;
  hosts: string[];
  upstream: Address;
  /**
   * The application's second slot: while `whenFileExists` exists, requests go to this upstream
   * instead (checked per request, no reload). A swap between the two slots is a file created or
   * removed: nginx keeps its config, its workers and every client connection (a reload would
   * close idle keep-alive connections under clients that are about to reuse them).
   */
  alternate?: { upstream: Address; whenFileExists: string };
  /**
   * A file nginx appends one byte to per request (buffered; runtime/usage-meter.ts counts them):
   * how much the application is used, to start the most used first after a restart.
   */
  usageLog?: string;
}

/** A static release, served from the trees the edge materialized for nginx (static-tree.ts). */
export interface StaticSite {
  kind: 'static';
  id: string;
  hosts: string[];
  /** Every file of the release, plus the precompressed forms as `<file>.br` / `<file>.gz` beside them (links refused below it). */
  root: string;
  /** The release's own files whose names end in `.gz` or `.br` (never read as an encoding of another file). */
  ownCompressedRoot: string;
  spaFallback: boolean;
}

export type Site = ProxySite | StaticSite;

export type { TlsInput } from './nginx-tls-sites.js';

export interface NginxConfigInput {
  /** The public address (the edge's `HOST`/`PORT`). */
  listen: Address;
  /** The Node edge's internal address: everything nginx does not answer itself goes there. */
  fallback: Address;
  /** Directory for nginx's pid file, temp files and error log (owned by the edge). */
  stateDir: string;
  /** X-Forwarded-Proto sent to the apps (`APPS_SCHEME`). */
  scheme: 'http' | 'https';
  workers: number;
  /** `load_module` path of ngx_http_brotli_static_module, or null when it is not installed. */
  brotliModule: string | null;
  /** Unix user (and group) the workers run as; null: nginx's default. */
  user: { name: string; group: string } | null;
  sites: Site[];
  tls?: TlsInput;
  /**
   * Content types for static files: extension → type, and the types sent with `; charset=utf-8`
   * (the Node edge's `mime-types` table, so both planes answer alike). Absent: nginx's mime.types.
   */
  contentTypes?: { byExtension: Record<string, string>; withCharset: string[] };
  /**
   * Where nginx sends its 5xx answers (the edge's first-minute watch, watch/nginx-status-feed.ts):
   * a loopback UDP port and the token each line starts with. Absent: no access log at all.
   */
  statusFeed?: { port: number; token: string };
  /**
   * The per-application metrics log (metrics/nginx-access-log.ts): every answer of an
   * application's server as `<id> <status> <request_time>`, buffered (64 KiB, flushed each second).
   * Absent: none.
   */
  metricsLog?: string;
}

const TOKEN = /^[0-9a-f]{16,64}$/;
const SERVER_ERRORS = Array.from({ length: 100 }, (_, i) => 500 + i);

const metricsFormat = (id: string) => `slipway_m_${id}`;

/**
 * nginx's access logs, off but for two: the 5xx answers, which go as syslog datagrams to the
 * edge (a line per 5xx: healthy traffic sends nothing; the map is looked at once per request;
 * never a file to rotate, and nginx never waits for the reader), and the metrics log. Their
 * formats (and the 5xx map) at the `http` level; the usage format beside them. Each application
 * has a metrics format of its own with its id written in (`slipway_m_<id>`): no variable to set
 * per request and no `if=` to test (a `set $slipway_app` in every server and `if=$slipway_app`
 * cost ~560 of nginx's ~26 000 instructions a request, callgrind, 2026-11-29). `siteIds`: the
 * sites a server was rendered for (their ids checked there).
 */
function logFormats(feed: NginxConfigInput['statusFeed'], metricsLog: string | undefined, siteIds: string[]): string {
  if (feed) check(TOKEN.test(feed.token), 'status feed token must be hex');
  return [
    // An empty line, one byte, per request in an application's usage file (ProxySite.usageLog).
    `  log_format slipway_usage '';`,
    // Every 5xx by name: a hash lookup per request where a regex (~^5) ran PCRE on each.
    feed
      ? `  map $status $slipway_server_error {
    default 0;
${SERVER_ERRORS.map((code) => `    ${code} 1;`).join('\n')}
  }
  log_format slipway_status '${feed.token} $proxy_host $status $request_method $uri';`
      : '',
    // `<id> <status> <request_time>` per answer of an application's servers (the fallback server writes none).
    ...(metricsLog ? siteIds.map((id) => `  log_format ${metricsFormat(id)} '${id} $status $request_time';`) : []),
  ]
    .filter(Boolean)
    .join('\n');
}

/** The 5xx feed's `access_log` (none: `off`), indented by `indent`: the `http` level's, repeated by a server with logs of its own. */
function statusFeedLog(feed: NginxConfigInput['statusFeed'], indent: string): string {
  return `${indent}${feed ? `access_log syslog:server=${address({ host: '127.0.0.1', port: feed.port })},tag=slipway,nohostname slipway_status if=$slipway_server_error;` : 'access_log off;'}`;
}

/**
 * An application server's own access logs: the usage file (proxied releases), the metrics log
 * (written in nginx's buffer, one write per 64 KiB or second) and the 5xx feed. A server with an
 * `access_log` of its own inherits none of the `http` level's, so the feed is repeated here.
 */
function siteAccessLogs(input: NginxConfigInput, site: Site): string {
  const usage = site.kind === 'proxy' && site.usageLog ? `    access_log ${path(site.usageLog)} slipway_usage buffer=4k flush=5s;` : '';
  const metrics = input.metricsLog ? `    access_log ${path(input.metricsLog)} ${metricsFormat(site.id)} buffer=64k flush=1s;` : '';
  if (!usage && !metrics) return '';
  return [usage, metrics, input.statusFeed ? statusFeedLog(input.statusFeed, '    ') : ''].filter(Boolean).join('\n') + '\n';
}

/** Names nginx accepts as `server_name` literally (lower-case DNS names; no spaces, quotes, `;`, `{`, `$`). */
const HOST_NAME = /^[a-z0-9*]([a-z0-9.-]*[a-z0-9])?$/;
const ID = /^[a-z0-9_]+$/;
const PATH = /^\/[A-Za-z0-9._/-]*$/;
const NET_HOST = /^[A-Za-z0-9.:-]+$/;
const EXTENSION = /^[A-Za-z0-9_.+-]+$/;
const MIME = /^[A-Za-z0-9.+-]+\/[A-Za-z0-9.+-]+$/;

function typesBlock(contentTypes: NginxConfigInput['contentTypes']): { types: string; charsetTypes: string } {
  if (!contentTypes)
    return {
      types: '  include /etc/nginx/mime.types;',
      charsetTypes: 'text/css text/plain text/xml text/javascript application/javascript application/json application/manifest+json',
    };
  const byType = new Map<string, string[]>();
  for (const [ext, type] of Object.entries(contentTypes.byExtension)) {
    if (!EXTENSION.test(ext) || !MIME.test(type)) continue;
    byType.set(type, [...(byType.get(type) ?? []), ext]);
  }
  const lines = [...byType].map(([type, exts]) => `    ${type} ${exts.join(' ')};`);
  return {
    types: `  types {\n${lines.join('\n')}\n  }`,
    charsetTypes: contentTypes.withCharset.filter((t) => MIME.test(t) && t !== 'text/html').join(' ') || 'text/plain',
  };
}

/** Fingerprinted asset names (the Node plane's rule too, static/fingerprinted.ts): cached for a year, immutable. */
const FINGERPRINTED = FINGERPRINTED_NAMES.source;

/**
 * Hop-by-hop request headers nginx would otherwise pass on. Never `Transfer-Encoding` or
 * `Content-Length`: nginx sets the framing of what it sends upstream itself (`Content-Length` when
 * it read the whole body before connecting, else `Transfer-Encoding: chunked` and its own chunks,
 * through its `$proxy_internal_chunked`). Clearing `Transfer-Encoding` here once sent a body that
 * arrived in several packets chunk-encoded with no header saying so: the app read the chunks as
 * the next request (RFC 9112 §6).
 */
const CLEARED_REQUEST_HEADERS = ['Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer', 'Proxy-Authorization', 'Expect'];
/** Hop-by-hop response headers an app may send (Connection, Transfer-Encoding, Upgrade nginx handles). */
const HIDDEN_RESPONSE_HEADERS = ['Keep-Alive', 'Proxy-Connection', 'Trailer', 'Proxy-Authenticate'];

/** Hosts the config can hold literally; others are left to the Node edge. */
export function isRenderableHost(host: string): boolean {
  return HOST_NAME.test(host) && !host.includes('*');
}

/** Paths the config can hold literally (no spaces, quotes, `;`, `$`, braces). */
export function isRenderablePath(p: string): boolean {
  return PATH.test(p);
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`nginx config: ${what}`);
}

function address(a: Address): string {
  check(NET_HOST.test(a.host) && Number.isInteger(a.port) && a.port > 0 && a.port < 65536, `bad address ${a.host}:${a.port}`);
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

function path(p: string): string {
  check(PATH.test(p), `path ${JSON.stringify(p)} has characters the config cannot hold`);
  return p;
}

function hosts(site: Site): string {
  const valid = site.hosts.filter((h) => HOST_NAME.test(h) && !h.includes('*'));
  check(valid.length === site.hosts.length, `site ${site.id}: host names must be lower-case DNS names`);
  return valid.join(' ');
}

function proxyHeaders(scheme: string, indent: string): string {
  return [
    'proxy_http_version 1.1;',
    // One Host, as routing saw it (nginx refuses a request with two).
    'proxy_set_header Host $http_host;',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    `proxy_set_header X-Forwarded-Proto ${scheme};`,
    'proxy_set_header X-Forwarded-Host $http_host;',
    'proxy_set_header Upgrade $http_upgrade;',
    'proxy_set_header Connection $slipway_connection;',
    ...CLEARED_REQUEST_HEADERS.map((h) => `proxy_set_header ${h} "";`),
    ...HIDDEN_RESPONSE_HEADERS.map((h) => `proxy_hide_header ${h};`),
    // Streaming both ways, as the Node edge did: request bodies unbuffered; responses pass through
    // nginx's memory buffers, which it writes on as the app produces data (a chunk, an event) and
    // never spills to a temp file (so a slow client slows the app down rather than filling the
    // disk). 'proxy_buffering off' streamed the same but cost ~5 µs of nginx CPU per request
    // (24.3 vs 19.5 µs, bench/README.md, "edge planes"). No size limit, no timeouts of ours.
    'proxy_buffering on;',
    'proxy_max_temp_file_size 0;',
    'proxy_request_buffering off;',
    'client_max_body_size 0;',
    'proxy_read_timeout 1d;',
    'proxy_send_timeout 1d;',
    'proxy_redirect off;',
  ]
    .map((line) => indent + line)
    .join('\n');
}

export const FALLBACK_HEADERS = [
  'proxy_http_version 1.1;',
  'proxy_set_header Host $http_host;',
  'proxy_set_header X-Forwarded-For $http_x_forwarded_for;',
  'proxy_set_header X-Slipway-Client $remote_addr;',
  'proxy_set_header Upgrade $http_upgrade;',
  'proxy_set_header Connection $slipway_connection;',
  'proxy_buffering off;',
  'proxy_request_buffering off;',
  'client_max_body_size 0;',
  'proxy_read_timeout 1d;',
  'proxy_send_timeout 1d;',
  'proxy_redirect off;',
]
  .map((line) => `      ${line}`)
  .join('\n');

function upstream(name: string, to: Address): string {
  return `
  upstream ${name} {
    server ${address(to)} max_fails=0;
    keepalive 64;
    keepalive_timeout 4s;
  }`;
}

function proxyUpstreams(site: ProxySite): string {
  check(ID.test(site.id), `bad site id ${site.id}`);
  return `${upstream(`app_${site.id}`, site.upstream)}${site.alternate ? upstream(`app_${site.id}_b`, site.alternate.upstream) : ''}`;
}

/** `extra`: directives after `server_name` (TLS certificate, the ACME location). */
function proxyServer(site: ProxySite, listen: string, scheme: string, extra = ''): string {
  check(ID.test(site.id), `bad site id ${site.id}`);
  const alternate = site.alternate;
  return `
  server {
    listen ${listen};
    server_name ${hosts(site)};
${extra}    location / {
${
  alternate
    ? `      # The slot switch: nginx looks at the marker at most once a second per worker (a stat on
      # every request cost ~1 µs of nginx's ~18), so a flip applies within SLOT_SWITCH_MS.
      open_file_cache max=64 inactive=60s;
      open_file_cache_valid ${SLOT_SWITCH_MS / 1000}s;
      open_file_cache_errors on;
      if (-f ${path(alternate.whenFileExists)}) {
        proxy_pass http://app_${site.id}_b;
      }
`
    : ''
}      proxy_pass http://app_${site.id};
${proxyHeaders(scheme, '      ')}
    }
  }
`;
}

function staticServer(site: StaticSite, listen: string, charsetTypes: string, extra = ''): string {
  check(ID.test(site.id), `bad site id ${site.id}`);
  const missing = site.spaFallback ? '@spa' : '=404';
  return `
  server {
    listen ${listen};
    server_name ${hosts(site)};
${extra}    root ${path(site.root)};
    # No link is followed below the root ("from" literal: Debian's brotli_static module finds no
    # forms with "from=$document_root"). Each release has its own root, so cached file handles
    # never outlive a swap.
    disable_symlinks on from=${path(site.root)};
    absolute_redirect off;
    server_name_in_redirect off;
    autoindex off;
    index index.html;
    gzip_static on;
    ${'brotli_static on;'}
    gzip_vary on;
    charset utf-8;
    charset_types ${charsetTypes};
    add_header Cache-Control $slipway_cache_control;
    add_header X-Content-Type-Options nosniff always;
    add_header Allow $slipway_allow always;
    if ($request_method !~ ^(GET|HEAD)$) { return 405; }
    # Dot segments as sent (nginx would resolve them): refused, as by the Node edge, never redirected.
    if ($request_uri ~* "^[^?]*(/|%2f)(\\.|%2e){1,2}(/|%2f|\\?|$)") { return 404; }
    error_page 403 404 =404 @missing;
    # A byte range is always of the file as it is (as with the Node edge): no precompressed form.
    error_page 418 = @range;
    if ($http_range != "") { return 418; }
    # Control characters (browsers strip tab/CR/LF), backslashes (read as '/') and dot segments: 404 before the file system.
    location ~ "[\\x00-\\x1f\\x7f\\x5c]" { return 404; }
    location ~ "(^|/)(\\.git|\\.env[^/]*|\\.htaccess|\\.DS_Store|\\.slipway-precompressed)(/|$)" { return 404; }
    # A request for x.gz / x.br is only ever the release's own file of that name.
    location ~ "\\.(gz|br)$" {
      root ${path(site.ownCompressedRoot)};
      disable_symlinks on from=${path(site.ownCompressedRoot)};
      gzip_static off;
      ${'brotli_static off;'}
      try_files $uri $uri/ ${missing};
    }
    location / {
      try_files $uri $uri/ ${missing};
    }
    location @range {
      gzip_static off;
      ${'brotli_static off;'}
      try_files $uri $uri/ ${missing};
    }
    location @spa {
      try_files $slipway_spa =404;
    }
    location @missing {
      types { }
      default_type "text/plain; charset=utf-8";
      charset off;
      return 404 "Not Found\\n";
    }
  }
`;
}

/** `brotli_static` lines only when the module is loaded (nginx refuses unknown directives). */
function withBrotli(text: string, brotli: boolean): string {
  return brotli ? text : text.replace(/^\s*brotli_static (on|off);\n/gm, '');
}

/** The whole `nginx.conf` for this route table. Throws on input it cannot render safely. */
export function renderNginxConfig(input: NginxConfigInput): string {
  check(Number.isInteger(input.workers) && input.workers >= 1 && input.workers <= 64, 'workers must be 1–64');
  check(input.scheme === 'http' || input.scheme === 'https', 'scheme must be http or https');
  const listen = address(input.listen);
  const httpsListen = input.tls ? address({ host: input.listen.host, port: input.tls.httpsPort }) : '';
  const { types, charsetTypes } = typesBlock(input.contentTypes);
  const state = path(input.stateDir);
  const ids = new Set<string>();
  const seen = new Set<string>();
  const sites: string[] = [];
  /** Ids of the sites with a server (a site whose every host is claimed before it has none). */
  const rendered: string[] = [];
  for (const site of input.sites) {
    check(!ids.has(site.id), `duplicate site id ${site.id}`);
    ids.add(site.id);
    // A host claimed twice (a custom domain moved between apps mid-reload) goes to the first site.
    const free = site.hosts.filter((h) => !seen.has(h));
    for (const h of free) seen.add(h);
    if (!free.length) continue;
    rendered.push(site.id);
    // HTTPS: hosts with a certificate get a server on the HTTPS port (HTTP redirects them);
    // the others stay on HTTP, where the ACME challenges reach the Node edge.
    const plan = siteTlsPlan(input.tls, free);
    const server = (hostsOf: string[], on: string, scheme: 'http' | 'https', directives: string) => {
      const s = { ...site, hosts: hostsOf };
      // First in the server (access_log applies to every answer, its server-level `return`s too).
      const extra = `${siteAccessLogs(input, s)}${directives}`;
      return s.kind === 'proxy' ? proxyServer(s, on, scheme, extra) : withBrotli(staticServer(s, on, charsetTypes, extra), input.brotliModule !== null);
    };
    if (site.kind === 'proxy') sites.push(proxyUpstreams(site));
    if (plan.httpHosts.length) sites.push(server(plan.httpHosts, listen, input.scheme, input.tls ? acmeLocation(FALLBACK_HEADERS) : ''));
    for (const https of plan.https) sites.push(server(https.hosts, `${httpsListen} ssl http2`, 'https', https.directives));
  }
  const tls = input.tls ? renderTlsGlobal(input.tls, { http: listen, https: httpsListen }, seen, FALLBACK_HEADERS) : '';
  return `# Rendered by the Slipway edge (libs/data-plane/src/nginx/nginx-config.ts); rewritten on every route change.
${input.brotliModule ? `load_module ${path(input.brotliModule)};\n` : ''}${input.user ? `user ${input.user.name} ${input.user.group};\n` : ''}worker_processes ${input.workers};
pid ${state}/nginx.pid;
error_log stderr warn;
worker_rlimit_nofile 65536;
events {
  worker_connections 8192;
  multi_accept on;
}
http {
${types}
  types_hash_max_size 4096;
  default_type application/octet-stream;
${logFormats(input.statusFeed, input.metricsLog, rendered)}
${statusFeedLog(input.statusFeed, '  ')}
  server_tokens off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65s;
  keepalive_requests 100000;
  merge_slashes on;
  client_body_temp_path ${state}/client-body;
  proxy_temp_path ${state}/proxy;
  fastcgi_temp_path ${state}/fastcgi;
  uwsgi_temp_path ${state}/uwsgi;
  scgi_temp_path ${state}/scgi;
  open_file_cache max=10000 inactive=30s;
  open_file_cache_valid 5s;
  open_file_cache_errors on;
  map $http_upgrade $slipway_connection {
    default upgrade;
    "" "";
  }
  map $request_method $slipway_allow {
    GET "";
    HEAD "";
    default "GET, HEAD";
  }
  map "$sent_http_content_type|$uri" $slipway_cache_control {
    "~^text/html" "no-cache";
    "~${FINGERPRINTED}" "public, max-age=31536000, immutable";
    "~^[^|]+\\|" "public, max-age=0, must-revalidate";
    default "";
  }
  # SPA fallback for a missing path: extension-less last segment, or a client asking for HTML.
  # (A name under .slipway-precompressed is never in an nginx tree: "no fallback".)
  map "$uri|$http_accept" $slipway_spa {
    "~^[^|]*/\\.?[^/.|]*\\|" /index.html;
    "~^[^|]*\\|.*text/html" /index.html;
    default /.slipway-precompressed/none;
  }
  upstream slipway_edge {
    server ${address(input.fallback)} max_fails=0;
    keepalive 32;
    keepalive_timeout 4s;
  }
  # Unknown hosts, apps starting, health and the internal API: the Node edge answers (it drops
  # hop-by-hop headers and sets X-Forwarded-* itself, taking the client's address from X-Slipway-Client).
  server {
    listen ${listen} default_server;
    server_name _;
    location / {
      proxy_pass http://slipway_edge;
${FALLBACK_HEADERS}
    }
  }
${tls}${sites.join('')}}
`;
}
