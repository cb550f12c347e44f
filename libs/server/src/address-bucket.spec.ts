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
