import { serviceTestEnv } from '@slipway/testing';
import fc from 'fast-check';
import { loadGatewayConfig } from '../config.js';
import { normaliseHostname } from './dto/add-domain.dto.js';

describe('normaliseHostname', () => {
  it.each([
    ['Shop.Example.com.', 'shop.example.com'],
    ['  shop.example.com  ', 'shop.example.com'],
    ['ＳＨＯＰ．ｅｘａｍｐｌｅ．ｃｏｍ', 'shop.example.com'],
    ['shop。example。com', 'shop.example.com'],
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['XN--BCHER-KVA.example.', 'xn--bcher-kva.example'],
  ])('%s → %s', (input, expected) => expect(normaliseHostname(input)).toBe(expected));

  it.each([
    '',
    '.',
    'shop.example.com..',
    'xn--zz.example',
    'https://shop.example.com',
    'shop.example.com:443',
    'shop.example.com/x',
    'shop.example.com?x',
    'shop.example.com#x',
    'shop.example.com\\x',
    'shop%2Eexample.com',
    'a@shop.example.com',
    'shop.example.com／x',
    '_slipway-challenge.example.com',
    '127.0.0.1',
    '[::1]',
    'shop',
    `${'a'.repeat(64)}.com`,
    'sh op.example.com',
  ])('refuses %j', (input) => {
    expect(normaliseHostname(input)).toBe('');
  });

  it('property: any string gives a stored name that is a fixed point (normalising it again changes nothing) or is refused', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.string({ unit: 'grapheme', maxLength: 40 }),
          fc.domain().map((d) => d.toUpperCase() + '.'),
        ),
        (input) => {
          const once = normaliseHostname(input);
          if (once === '') return;
          expect(once).toMatch(/^[a-z0-9.-]+$/);
          expect(normaliseHostname(once)).toBe(once);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('SLIPWAY_DNS_SERVERS', () => {
  const load = (value?: string) =>
    loadGatewayConfig(serviceTestEnv('postgresql://u@127.0.0.1:5432/x', value === undefined ? {} : { SLIPWAY_DNS_SERVERS: value }));

  it('defaults to the system resolver and accepts ip, ip:port and [ipv6]:port lists', () => {
    expect(load().SLIPWAY_DNS_SERVERS).toEqual([]);
    expect(load(' 127.0.0.1:5353, ::1 ,[::1]:53,9.9.9.9').SLIPWAY_DNS_SERVERS).toEqual(['127.0.0.1:5353', '::1', '[::1]:53', '9.9.9.9']);
  });

  it.each(['dns.example.com', '127.0.0.1:0', '127.0.0.1:70000', '300.1.1.1', '[::1', 'http://127.0.0.1'])(
    'refuses %j with a message naming the variable',
    (value) => {
      expect(() => load(value)).toThrow(/SLIPWAY_DNS_SERVERS/);
    },
  );
});
