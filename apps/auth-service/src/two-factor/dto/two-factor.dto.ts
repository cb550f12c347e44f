import { z } from '@slipway/config';

// Better Auth's bodies (plugins/two-factor): the password is required (no `allowPasswordless`).
const password = z.string().max(1024);
const code = z.string().max(64);

export const enableBody = z.object({ password, method: z.enum(['otp', 'totp']).default('totp'), issuer: z.string().max(200).optional() });
export const passwordBody = z.object({ password });
export const verifyCodeBody = z.object({ code, trustDevice: z.boolean().optional() });
export const verifyBackupCodeBody = z.object({ code, disableSession: z.boolean().optional(), trustDevice: z.boolean().optional() });
export const sendOtpBody = z.object({ trustDevice: z.boolean().optional() }).optional();

export type EnableInput = z.output<typeof enableBody>;
export type VerifyCodeInput = z.output<typeof verifyCodeBody>;
export type VerifyBackupCodeInput = z.output<typeof verifyBackupCodeBody>;
