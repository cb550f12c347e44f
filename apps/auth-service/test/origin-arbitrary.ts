import fc from 'fast-check';

/**
 * Origins and absolute URLs built from parts, each with the verdict the parts call for: trusted
 * only when the scheme is http(s), there is no userinfo, and the host+port+scheme is exactly the
 * tenant's own origin, or the host is one of the three loopback hosts (while local development is
 * allowed). The verdict is decided from the parts, not by parsing the result. Loopback spellings
 * include what the URL standard itself reads as 127.0.0.1 / ::1 (`127.1`, `0x7f.0.0.1`,
 * `127.0.0.1.`, fullwidth letters) — the same machine; `localhost.` is a DNS name and is not.
 */
export interface OriginCase {
  value: string;
  trusted: boolean;
  /** Only ASCII: can go in an Origin header. */
  ascii: boolean;
}

export function originCases(own: { scheme: 'http' | 'https'; host: string; port: number }): fc.Arbitrary<OriginCase> {
  const ownHost = own.host;
  const hosts = fc.oneof(
    fc.constant({ host: ownHost, kind: 'own' as const }),
    fc.constant({ host: ownHost.toUpperCase(), kind: 'own' as const }),
    fc.constant({ host: `${ownHost}.`, kind: 'other' as const }),
    fc
      .constantFrom('localhost', 'LOCALHOST', 'LocalHost', '127.0.0.1', '[::1]', '[0:0:0:0:0:0:0:1]', '127.1', '0x7f.0.0.1', '127.0.0.1.', 'ｌｏｃａｌｈｏｓｔ')
      .map((host) => ({ host, kind: 'loopback' as const })),
    fc
      .constantFrom(
        'localhost.',
        'LOCALHOST.',
        'b.localhost',
        'shop.localhost',
        'victim.localhost.',
        'localhost.localhost',
        'localhost.evil.com',
        'evil.localhost',
        'evil.com',
        'localhost-evil.com',
        'xn--localhost-9ya.com',
        'lοcalhost',
        '127.0.0.2',
        '0.0.0.0',
        '[::2]',
        '[::ffff:7f00:1]',
        'example.com',
        `x${ownHost}`,
        `${ownHost}.evil.com`,
        `evil.${ownHost}`,
      )
      .map((host) => ({ host, kind: 'other' as const })),
    fc.domain().map((host) => ({ host, kind: 'other' as const })),
  );
  const schemes = fc.constantFrom('http', 'https', 'HTTP', 'Https', 'ftp', 'ws', 'javascript', 'file', 'data');
  const ports = fc.oneof(
    fc.constant(''),
    fc.constant(String(own.port)),
    fc.constant(own.scheme === 'http' ? '80' : '443'),
    fc.integer({ min: 1, max: 65535 }).map(String),
  );
  const userinfos = fc.constantFrom('', '', '', 'user@', 'user:pass@', `${ownHost}@`, `${ownHost}:${own.port}@`, ':@', '@');
  const tails = fc.constantFrom('', '', '/', '/reset', '/reset?token=x', '#x', '/.', '//evil.com');
  return fc.record({ host: hosts, scheme: schemes, port: ports, userinfo: userinfos, tail: tails }).map(({ host, scheme, port, userinfo, tail }) => {
    const value = `${scheme}://${userinfo}${host.host}${port ? `:${port}` : ''}${tail}`;
    const web = scheme.toLowerCase() === 'http' || scheme.toLowerCase() === 'https';
    const defaultPort = scheme.toLowerCase() === 'https' ? '443' : '80';
    const effectivePort = port === '' || port === defaultPort ? '' : port;
    const ownOrigin =
      host.kind === 'own' &&
      scheme.toLowerCase() === own.scheme &&
      effectivePort === (String(own.port) === (own.scheme === 'https' ? '443' : '80') ? '' : String(own.port));
    const trusted = web && userinfo === '' && (ownOrigin || host.kind === 'loopback');
    return { value, trusted, ascii: /^[\x21-\x7e]*$/.test(value) };
  });
}
