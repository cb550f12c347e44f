import fc from 'fast-check';
import { chooseCoding } from './accept-encoding.js';
import { directoryLocation, parseRequestPath, sameOriginPath } from './request-path.js';

const BASE = 'http://app.localhost:8080/';

describe('redirect locations never leave the origin', () => {
  it('property: sameOriginPath of any string resolves to the origin it was sent on', () => {
    const hostile = fc.constantFrom('/', '\\', '\t', '\n', '\r', ' ', '\u0000', '\u000b', '%2f', '%5c', 'evil.example', '@', ':', '.', '?', '#', 'é');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(hostile).map((a) => a.join('')),
        ),
        (s) => {
          expect(new URL(sameOriginPath(s), BASE).origin).toBe(new URL(BASE).origin);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('property: a directory redirect built from any decodable path stays on the origin', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom('/', '//', '%2f', 'evil.example', '%5c', '\\'))), (parts) => {
        const parsed = parseRequestPath(`/${parts.join('')}`);
        if (parsed.kind !== 'path' || parsed.segments.length === 0) return;
        const location = directoryLocation(parsed.segments);
        expect(location).toMatch(/^\/[^/\\]/);
        expect(new URL(location, BASE).origin).toBe(new URL(BASE).origin);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Accept-Encoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, br', 'br'],
    ['br;q=0', null],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0', null],
    ['*, br;q=0', 'gzip'],
    ['gzip;q=0.8, br;q=0.5', 'gzip'],
    ['x-gzip', 'gzip'],
    ['Br ; Q=1', 'br'],
    ['br;q=2', null],
    ['br;q=', null],
    ['identity', null],
    ['br;q=0.5, identity', null],
    [['gzip', 'br'], 'br'],
  ] as [string | string[] | undefined, string | null][])('%j → %s', (header, expected) => {
    expect(chooseCoding(header, ['br', 'gzip'])).toBe(expected);
  });

  it('never picks a form the release does not have', () => {
    expect(chooseCoding('br', ['gzip'])).toBeNull();
    expect(chooseCoding('br, gzip', [])).toBeNull();
  });
});
