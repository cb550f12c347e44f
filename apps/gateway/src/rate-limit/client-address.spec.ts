import { BlockList, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { addressBucket, clientAddress } from './client-address.js';

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
      fc.property(fc.ipV4().filter((ip) => ip !== '192.0.2.1'), fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string())), (peer, xff) => {
        expect(clientAddress(peer, xff.join(', '), ['192.0.2.1'])).toBe(peer);
        expect(clientAddress(peer, xff, ['192.0.2.1'])).toBe(peer);
      }),
    );
  });
});

describe('addressBucket', () => {
  it('keeps IPv4 addresses and cuts IPv6 to its /64', () => {
    expect(addressBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucket('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff'.toLowerCase())).toBe('2001:db8:1:2::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('puts every IPv6 address in a /64 that contains it, the same for all spellings of it (property, node:net as the oracle)', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const bucket = addressBucket(ip);
        const prefix = bucket.replace(/\/64$/, '');
        expect(isIPv6(prefix)).toBe(true);
        const list = new BlockList();
        list.addSubnet(prefix, 64, 'ipv6');
        expect(list.check(ip, 'ipv6')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
