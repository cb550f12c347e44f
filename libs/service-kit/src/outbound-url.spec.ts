import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { lookup } from 'node:dns/promises';
import { fetchOutbound, isForbiddenAddress, outboundUrlProblem, outboundUrlProblemResolved, OutboundUrlRefused } from './outbound-url.js';

const strict = { allowPrivate: false, platformHosts: ['auth.slipway.example'] };
const lax = { allowPrivate: true, platformHosts: ['auth.slipway.example'] };

describe('outbound URLs chosen by a tenant (SSRF)', () => {
  it('refuses internal addresses, IPv4 and IPv6, mapped or not', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.255',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
    ])
      expect([a, isForbiddenAddress(a)]).toEqual([a, true]);
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect([a, isForbiddenAddress(a)]).toEqual([a, false]);
  });

  it('requires https without userinfo, refuses the platform’s own hosts, localhost and internal literals', () => {
    expect(outboundUrlProblem('https://idp.example.com', strict)).toBeNull();
    expect(outboundUrlProblem('http://idp.example.com', strict)).toMatch(/https/);
    expect(outboundUrlProblem('https://u:p@idp.example.com', strict)).toMatch(/user name/);
    expect(outboundUrlProblem('https://AUTH.slipway.example./x', strict)).toMatch(/platform/);
    for (const url of [
      'https://localhost:8443',
      'https://a.localhost',
      'https://127.0.0.1',
      'https://10.0.0.1',
      'https://169.254.169.254/latest',
      'https://[::1]:8443',
      'https://[::ffff:169.254.169.254]',
      'https://2130706433',
      'https://0x7f.1',
    ])
      expect([url, outboundUrlProblem(url, strict)]).toEqual([url, expect.stringMatching(/loopback|internal/)]);
    // Development and tests only: http and internal addresses allowed (the platform's hosts too: they are local then).
    expect(outboundUrlProblem('http://127.0.0.1:9000', lax)).toBeNull();
  });

  it('refuses a name that resolves to loopback (the machine’s own name)', async () => {
    const name = hostname();
    const { address } = await lookup(name);
    expect(isForbiddenAddress(address)).toBe(true);
    expect(await outboundUrlProblemResolved(`https://${name}:8443/`, strict)).toMatch(/resolves to/);
  });

  describe('at connect time', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('never connects to a name resolving to loopback, nor to a loopback literal; allowed, it does', async () => {
      connections = 0;
      await expect(fetchOutbound(`https://${hostname()}:${port}/.well-known/openid-configuration`, strict)).rejects.toBeInstanceOf(OutboundUrlRefused);
      await expect(fetchOutbound(`https://127.0.0.1:${port}/`, strict)).rejects.toBeInstanceOf(OutboundUrlRefused);
      await expect(fetchOutbound(`http://${hostname()}:${port}/`, strict)).rejects.toBeInstanceOf(OutboundUrlRefused);
      expect(connections).toBe(0);
      await expect(fetchOutbound(`http://${hostname()}:${port}/`, lax)).rejects.toThrow();
      expect(connections).toBe(1);
    });
  });
});
