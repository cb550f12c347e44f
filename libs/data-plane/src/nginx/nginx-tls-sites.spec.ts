/**
 * The HTTPS part of the nginx plane's config: what goes where, checked by the real `nginx -t`, and
 * names or paths that could change the config's meaning refused. Serving it end to end (pebble,
 * handshakes, redirects, renewal) is test/tls-acme.e2e.spec.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderNginxConfig, type NginxConfigInput, type TlsInput } from './nginx-config.js';
import { validateConfig } from './nginx-process.js';

describe('HTTPS servers in the nginx plane config', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-nginx-tls-'));
    await mkdir(join(dir, 'static', 'own'), { recursive: true });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const bundle = (host: string) => `/srv/tls/certs/${host}/bundle.pem`;
  const input = (tls: TlsInput | undefined): NginxConfigInput => ({
    listen: { host: '127.0.0.1', port: 18080 },
    fallback: { host: '127.0.0.1', port: 18081 },
    stateDir: dir,
    scheme: 'https',
    workers: 1,
    brotliModule: null,
    user: null,
    sites: [
      { kind: 'proxy', id: 'api', hosts: ['api.apps.example', 'api.example.com'], upstream: { host: '127.0.0.1', port: 19000 } },
      {
        kind: 'static',
        id: 'site',
        hosts: ['site.apps.example'],
        root: join(dir, 'static'),
        ownCompressedRoot: join(dir, 'static', 'own'),
        spaFallback: false,
      },
    ],
    tls,
  });
  const tls: TlsInput = {
    httpsPort: 18443,
    redirectHttp: true,
    certificates: ['api.apps.example', 'site.apps.example', 'starting.apps.example'].map((h) => ({ hosts: [h], certificate: bundle(h), key: bundle(h) })),
  };
  /** The `server { … }` blocks whose server_name is exactly `names`. */
  const servers = (text: string, names: string) =>
    text
      .split(/\n {2}server \{\n/)
      .slice(1)
      .filter((block) => block.includes(`server_name ${names};`));

  it('splits each site: certified hosts on HTTPS (and redirected on HTTP), the others on HTTP with the ACME path to the Node edge', async () => {
    const text = renderNginxConfig(input(tls));
    const file = join(dir, 'nginx.conf');
    await writeFile(file, text);
    expect(await validateConfig('nginx', file)).toBeNull();

    const [apiHttps] = servers(text, 'api.apps.example');
    expect(apiHttps).toContain('listen 127.0.0.1:18443 ssl http2;');
    expect(apiHttps).toContain(`ssl_certificate ${bundle('api.apps.example')}$slipway_tls_lazy;`);
    expect(apiHttps).toContain('proxy_pass http://app_api;');
    expect(apiHttps).toContain('proxy_set_header X-Forwarded-Proto https;');
    // The custom domain without a certificate stays on HTTP, where HTTP-01 reaches the edge.
    const [customHttp] = servers(text, 'api.example.com');
    expect(customHttp).toContain('listen 127.0.0.1:18080;');
    expect(customHttp).toContain('location ^~ /.well-known/acme-challenge/ {\n      proxy_pass http://slipway_edge;');
    expect(text.match(/upstream app_api \{/g)).toHaveLength(1);
    const [siteHttps] = servers(text, 'site.apps.example');
    expect(siteHttps).toMatch(/listen 127\.0\.0\.1:18443 ssl http2;[\s\S]*root \//);
    // One redirect server for every certified host, ACME path excepted.
    const [redirect] = servers(text, 'api.apps.example site.apps.example starting.apps.example');
    expect(redirect).toContain('return 301 https://$host:18443$request_uri;');
    expect(redirect).toContain('return 308 https://$host:18443$request_uri;');
    expect(redirect).toContain('location ^~ /.well-known/acme-challenge/');
    // A certificate no site holds (an app starting): HTTPS to the Node edge, as HTTP would.
    const [orphan] = servers(text, 'starting.apps.example');
    expect(orphan).toContain('proxy_pass http://slipway_edge;');
    expect(text).toContain('listen 127.0.0.1:18443 ssl http2 default_server;\n    ssl_reject_handshake on;');
  });

  it('without HTTPS the config has no TLS at all', async () => {
    const text = renderNginxConfig(input(undefined));
    expect(text).not.toMatch(/ssl|acme-challenge/);
  });

  it('refuses certificate names and paths that could change what the config means', () => {
    for (const host of ['evil.example; include /etc/passwd', 'a.example b.example', 'UPPER.example', 'x.example}', '*.example']) {
      expect(() => renderNginxConfig(input({ ...tls, certificates: [{ hosts: [host], certificate: bundle('a'), key: bundle('a') }] }))).toThrow(/nginx config/);
    }
    for (const path of ['/srv/tls/a b.pem', '/srv/tls/$x.pem', 'relative.pem', '/srv/tls/a;.pem']) {
      expect(() => renderNginxConfig(input({ ...tls, certificates: [{ hosts: ['api.apps.example'], certificate: path, key: path }] }))).toThrow(/nginx config/);
    }
  });
});
