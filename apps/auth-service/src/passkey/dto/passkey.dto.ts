import { z } from '@slipway/config';

/** A WebAuthn response as @simplewebauthn/browser hands it over; SimpleWebAuthn checks its contents. */
const webAuthnResponse = z.record(z.string(), z.unknown());

export const registerOptionsQuery = z.object({
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  name: z.string().max(256).optional(),
  context: z.string().max(1024).optional(),
});
export type RegisterOptionsQuery = z.output<typeof registerOptionsQuery>;

export const verifyRegistrationBody = z.object({
  response: webAuthnResponse,
  name: z.string().trim().max(256).optional(),
  createSession: z.boolean().optional(),
});
export type VerifyRegistrationInput = z.output<typeof verifyRegistrationBody>;

export const verifyAuthenticationBody = z.object({ response: webAuthnResponse });
export type VerifyAuthenticationInput = z.output<typeof verifyAuthenticationBody>;

export const deletePasskeyBody = z.object({ id: z.string().min(1).max(256) });
export const updatePasskeyBody = z.object({ id: z.string().min(1).max(256), name: z.string().trim().min(1).max(256) });
