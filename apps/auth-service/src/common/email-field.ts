import { z } from '@slipway/config';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An email in a request body; a malformed one is 400 INVALID_EMAIL, as in Better Auth. */
export const emailField = z
  .string()
  .max(320)
  .transform((v, ctx) => {
    const email = v.trim();
    if (!EMAIL.test(email)) {
      ctx.addIssue({ code: 'custom', message: 'Invalid email' });
      return z.NEVER;
    }
    return email;
  });
