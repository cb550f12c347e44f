import { BlockList, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { addressBucket } from './address-bucket.js';

describe('addressBucket (the unit the sign-in limits count)', () => {
  it('keeps IPv4, cuts IPv6 to its /64 whatever the spelling, and reads IPv4-mapped IPv6 as IPv4', () => {
    expect(addressBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucket('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:DB8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:0db8:0001:0002::abcd%eth0')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(addressBucket('::FFFF:198.51.100.7')).toBe('198.51.100.7');
    expect(addressBucket('unknown')).toBe('unknown');
  });

  it('puts two addresses in one bucket exactly when their first 64 bits agree', () => {
    expect(addressBucket('2001:db8:0:1::1')).toBe(addressBucket('2001:db8:0:1:ffff::9'));
    expect(addressBucket('2001:db8:0:1::1')).not.toBe(addressBucket('2001:db8:0:2::1'));
  });
});

describe('addressBucket (as the gateway counted it)', () => {
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
