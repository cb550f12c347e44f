import { LIMITS } from '@slipway/contract';
import { z } from 'zod';

/** How an email is compared: sign-up stores it so, sign-in looks it up and counts attempts by it. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export const SignUpBody = z.object({
  email: z.string().transform(normaliseEmail).pipe(z.email('enter a valid email address')),
  // The 72-byte ceiling is checked by OwnerPasswords (its own code, password_too_long); this only bounds the parse.
  password: z.string().min(LIMITS.ownerPassword.minLength, `use at least ${LIMITS.ownerPassword.minLength} characters`).max(10_000, 'use at most 72 bytes'),
  name: z.string().trim().max(100).optional(),
});
