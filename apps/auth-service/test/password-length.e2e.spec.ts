import fc from 'fast-check';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

/** 72 UTF-8 bytes exactly: bcrypt's whole input. */
const BASE72 = `${'é'.repeat(20)}${'p'.repeat(32)}`;

describe('applications’ end users: passwords over 72 bytes are refused at every door, never cut short (real HTTP)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  const client = () => new TestClient(shop.authUrl, originOf('shop'));

  beforeAll(async () => {
    h = await startAuthHarness('authpwlength');
    shop = await h.createTenant('shop');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('sign-up: 95 characters, or 73 bytes in 72 characters, is 400 PASSWORD_TOO_LONG and nothing is stored cut short; exactly 72 bytes is accepted', async () => {
    expect(Buffer.byteLength(BASE72)).toBe(72);
    for (const [i, password] of ['x'.repeat(95), `${'a'.repeat(71)}é`, '😀'.repeat(19)].entries()) {
      const res = await client().signUp(`long-${i}@example.com`, password);
      expect([i, res.status, (await res.json()).code]).toEqual([i, 400, 'PASSWORD_TOO_LONG']);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    // Nothing was stored cut short: the first 72 bytes of the refused password sign in to nothing.
    expect((await client().signIn('long-0@example.com', 'x'.repeat(72))).status).toBe(401);
    expect((await client().signUp('exact@example.com', BASE72)).status).toBe(200);
  });

  it('sign-in: any password that only shares its first 72 bytes with the stored one is refused like a wrong one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }), async (suffix) => {
        const res = await client().signIn('exact@example.com', `${BASE72}${suffix}`);
        expect(res.status).toBe(401);
        expect((await res.json()).code).toBe('INVALID_EMAIL_OR_PASSWORD');
        expect(res.headers.getSetCookie()).toEqual([]);
      }),
      { numRuns: 25, seed: 72 },
    );
    expect((await client().signIn('exact@example.com', BASE72)).status).toBe(200);
  });

  it('change-password: a new password over 72 bytes is refused; a current one that only shares 72 bytes does not count', async () => {
    const c = client();
    expect((await c.signIn('exact@example.com', BASE72)).status).toBe(200);
    const tooLong = await c.post('/change-password', { currentPassword: BASE72, newPassword: 'n'.repeat(95) });
    expect([tooLong.status, (await tooLong.json()).code]).toEqual([400, 'PASSWORD_TOO_LONG']);
    const sharing = await c.post('/change-password', { currentPassword: `${BASE72}tail`, newPassword: 'a fine new password' });
    expect([sharing.status, (await sharing.json()).code]).toEqual([400, 'INVALID_PASSWORD']);
    expect((await client().signIn('exact@example.com', BASE72)).status).toBe(200);
  });

  it('reset-password: a new password over 72 bytes is refused and the link still works for an acceptable one', async () => {
    const c = client();
    expect((await c.signUp('reset@example.com', 'old password 1')).status).toBe(200);
    expect((await c.post('/request-password-reset', { email: 'reset@example.com', redirectTo: `${originOf('shop')}/reset` })).status).toBe(200);
    const email = await h.prisma.email.findFirstOrThrow({
      where: { applicationId: shop.applicationId, toAddress: 'reset@example.com' },
      orderBy: { createdAt: 'desc' },
    });
    const token = new URL(/(http\S+)/.exec(email.textBody)![1]!).pathname.split('/').pop()!;
    const tooLong = await c.post('/reset-password', { token, newPassword: `${BASE72}${'x'.repeat(23)}` });
    expect([tooLong.status, (await tooLong.json()).code]).toEqual([400, 'PASSWORD_TOO_LONG']);
    expect(await (await c.post('/reset-password', { token, newPassword: BASE72 })).json()).toEqual({ status: true });
    expect((await client().signIn('reset@example.com', `${BASE72}${'x'.repeat(23)}`)).status).toBe(401);
    expect((await client().signIn('reset@example.com', BASE72)).status).toBe(200);
  });
});
