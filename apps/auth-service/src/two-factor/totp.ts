import { timingSafeEqual } from 'node:crypto';
import { createOTP } from '@better-auth/utils/otp';

/** Better Auth's defaults: 6 digits, 30 s, one step either side. */
const DIGITS = 6;
const PERIOD_SECONDS = 30;
const WINDOW = 1;

/** The `otpauth://` URI authenticator apps read (Better Auth's own encoder). */
export function totpURI(secret: string, issuer: string, account: string): string {
  return createOTP(secret, { digits: DIGITS, period: PERIOD_SECONDS }).url(issuer, account);
}

/**
 * The time step whose code `code` is, within the window, or null. Codes come from Better Auth's
 * own HOTP (`@better-auth/utils/otp`); every candidate is compared, in constant time. The step is
 * what makes a code usable once: the caller accepts it only if it is later than the last one used.
 */
export async function matchingStep(secret: string, code: string, now = Date.now()): Promise<number | null> {
  const otp = createOTP(secret, { digits: DIGITS, period: PERIOD_SECONDS });
  const current = Math.floor(now / 1000 / PERIOD_SECONDS);
  const given = Buffer.from(code);
  let found: number | null = null;
  for (let step = current - WINDOW; step <= current + WINDOW; step++) {
    const expected = Buffer.from(await otp.hotp(step));
    const equal = given.length === expected.length && timingSafeEqual(given, expected);
    if (equal && found === null) found = step;
  }
  return found;
}
