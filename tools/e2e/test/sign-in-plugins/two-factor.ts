import { base32 } from '@better-auth/utils/base32';
import { createOTP } from '@better-auth/utils/otp';
import { twoFactorClient } from 'better-auth/client/plugins';
import type { SharedContext } from './context.js';
import { pluginClient } from './context.js';

/** The code an authenticator app shows for `totpURI`, `offset` time steps from now. */
async function codeFor(totpURI: string, offset = 0): Promise<string> {
  return createOTP(base32.decode(new URL(totpURI).searchParams.get('secret')!)).hotp(Math.floor(Date.now() / 30_000) + offset);
}

/** Two-factor through the platform: enrol TOTP, a challenged sign-in, a wrong code refused, the right one signs in. */
export function twoFactorTests(shared: SharedContext) {
  it('two-factor: enrols TOTP, challenges the next sign-in, refuses a wrong code and signs in with the right one', async () => {
    const ctx = shared.current;
    await ctx.settings({ plugins: { twoFactor: { enabled: true, issuer: 'Plugin Shop' } } });
    const password = 'a long passphrase for 2fa';
    const { client } = pluginClient(ctx, [twoFactorClient()]);
    expect((await client.signUp.email({ email: 'twofactor@example.com', password, name: 'Tove' })).error).toBeNull();
    const enabled = await client.twoFactor.enable({ password });
    expect(enabled.error).toBeNull();
    const { totpURI, backupCodes } = enabled.data as { totpURI: string; backupCodes: string[] };
    expect(totpURI).toMatch(/^otpauth:\/\/totp\/Plugin%20Shop:twofactor%40example\.com\?secret=/);
    expect(backupCodes).toHaveLength(10);
    expect((await client.twoFactor.verifyTotp({ code: await codeFor(totpURI) })).error).toBeNull();
    expect((await client.getSession()).data?.user.twoFactorEnabled).toBe(true);
    const [row] = await ctx.tenantQuery(
      `SELECT t.verified, cardinality(t.backup_codes) AS codes, position(convert_to($2, 'UTF8') IN t.secret) AS plaintext
         FROM service_auth.two_factors t JOIN service_auth.users u ON u.id = t.user_id WHERE u.email = $1`,
      ['twofactor@example.com', Buffer.from(base32.decode(new URL(totpURI).searchParams.get('secret')!)).toString()],
    );
    expect(row).toEqual({ verified: true, codes: 10, plaintext: 0 });

    const other = pluginClient(ctx, [twoFactorClient()]);
    const signIn = await other.client.signIn.email({ email: 'twofactor@example.com', password });
    expect(signIn.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] });
    expect(other.jar.has('__Secure-slipway.two_factor')).toBe(true);
    expect((await other.client.getSession()).data).toBeNull();
    const right = await codeFor(totpURI, 1);
    const wrong = await other.client.twoFactor.verifyTotp({ code: right === '000000' ? '000001' : '000000' });
    expect(wrong.error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    expect((await other.client.twoFactor.verifyTotp({ code: right })).error).toBeNull();
    expect((await other.client.getSession()).data?.user.email).toBe('twofactor@example.com');
    await ctx.settings({ plugins: { twoFactor: { enabled: false } } });
  });
}
