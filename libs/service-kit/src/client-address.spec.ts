import fc from 'fast-check';
import { clientAddress, normaliseIp } from './client-address.js';

describe('clientAddress', () => {
  it('is the peer when no proxy is trusted, whatever the headers say', () => {
    expect(clientAddress('127.0.0.5', '1.2.3.4', [])).toBe('127.0.0.5');
    expect(clientAddress('::ffff:127.0.0.5', ['1.2.3.4', '5.6.7.8'], [])).toBe('127.0.0.5');
    expect(clientAddress(undefined, undefined, [])).toBe('unknown');
  });

  it('behind trusted proxies, is the right-most entry that is not a trusted proxy', () => {
    const trusted = ['10.0.0.1', '10.0.0.2'];
    expect(clientAddress('10.0.0.1', 'spoofed, 203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', '203.0.113.9, 10.0.0.2', trusted)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:10.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', undefined, trusted)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.3', '203.0.113.9', trusted)).toBe('10.0.0.3');
  });

  it('never lets an untrusted peer choose its address (property)', () => {
    fc.assert(
      fc.property(
        fc.ipV4().filter((ip) => ip !== '192.0.2.1'),
        fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string())),
        (peer, xff) => {
          expect(clientAddress(peer, xff.join(', '), ['192.0.2.1'])).toBe(peer);
          expect(clientAddress(peer, xff, ['192.0.2.1'])).toBe(peer);
        },
      ),
    );
  });

  it('reads IPv6 peers and hops in one spelling: zone id dropped, lower case (both apps alike)', () => {
    expect(clientAddress('FE80::1%eth0', undefined, [])).toBe('fe80::1');
    expect(clientAddress('::FFFF:203.0.113.9', undefined, [])).toBe('203.0.113.9');
    expect(clientAddress('fe80::a%lo', '2001:DB8::9%eth1', ['FE80::A'])).toBe('2001:db8::9');
    expect(clientAddress('2001:db8::1', '203.0.113.9', ['2001:DB8::1%eth0'])).toBe('203.0.113.9');
    expect(clientAddress('::1', '::FFFF:203.0.113.9, ::1', ['::1'])).toBe('203.0.113.9');
  });

  it('trusts only the proxies its app names: an untrusted IPv6 peer keeps its own address', () => {
    expect(clientAddress('2001:db8::2', '203.0.113.9', ['2001:db8::1'])).toBe('2001:db8::2');
    expect(clientAddress('::ffff:10.0.0.1', '203.0.113.9', ['::ffff:10.0.0.1'])).toBe('203.0.113.9');
  });

  it('is the last trusted proxy when every hop is one (the edge speaking for itself)', () => {
    expect(clientAddress('127.0.0.1', '127.0.0.1, ::ffff:127.0.0.1', ['127.0.0.1'])).toBe('127.0.0.1');
  });
});

describe('normaliseIp', () => {
  it('drops zone ids, lower-cases, and reads IPv4-mapped IPv6 as IPv4', () => {
    expect(normaliseIp('fe80::1%eth0')).toBe('fe80::1');
    expect(normaliseIp('FE80::ABCD%25en0')).toBe('fe80::abcd');
    expect(normaliseIp('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(normaliseIp('::FFFF:1.2.3.4')).toBe('1.2.3.4');
    expect(normaliseIp('203.0.113.9')).toBe('203.0.113.9');
    expect(normaliseIp('unknown')).toBe('unknown');
  });

  it('keeps an IPv6 address that merely starts with ::ffff: (not IPv4-mapped) whole', () => {
    expect(normaliseIp('::ffff:abcd')).toBe('::ffff:abcd');
    expect(normaliseIp('::ffff:0:1')).toBe('::ffff:0:1');
  });

  it('is idempotent and gives every IPv6 spelling of case one form (property)', () => {
    fc.assert(fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), (ip) => expect(normaliseIp(normaliseIp(ip))).toBe(normaliseIp(ip))));
    fc.assert(fc.property(fc.ipV6(), (ip) => expect(normaliseIp(ip.toUpperCase())).toBe(normaliseIp(ip))));
  });
});
