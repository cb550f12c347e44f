import { SMTPServer } from 'smtp-server';
import { freePort, waitFor } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('SMTP delivery when SMTP_URL is set (a real SMTP server, smtp-server)', () => {
  let h: AuthHarness;
  let smtp: SMTPServer;
  let shop: { applicationId: string; authUrl: string };
  const received: { to: string[]; data: string }[] = [];

  beforeAll(async () => {
    const port = await freePort();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        let data = '';
        stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
    h = await startAuthHarness('authsmtp', { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'Shop <no-reply@shop.example>' });
    shop = await h.createTenant('shop');
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('delivers a password-reset email and marks the outbox row sent', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('rita@example.com');
    expect((await c.post('/request-password-reset', { email: 'rita@example.com' })).status).toBe(200);
    const row = await waitFor(
      async () => {
        const r = await h.prisma.email.findFirst({ where: { applicationId: shop.applicationId, toAddress: 'rita@example.com' } });
        return r?.status === 'sent' ? r : undefined;
      },
      { timeoutMs: 10_000, what: 'the email to be sent' },
    );
    expect(row.sentAt).toBeInstanceOf(Date);
    expect(received).toHaveLength(1);
    expect(received[0]!.to).toEqual(['rita@example.com']);
    expect(received[0]!.data).toContain('Subject: Reset your password');
    expect(received[0]!.data).toContain('From: Shop <no-reply@shop.example>');
    expect(received[0]!.data).toContain(`${shop.authUrl}/reset-password/`);
  });
});
