import { z } from '@slipway/config';
import { emailField } from '../../common/index.js';

/** What a code is for (Better Auth's types; `change-email` has no route here). */
export const OTP_TYPES = ['sign-in', 'email-verification', 'forget-password'] as const;
export type OtpType = (typeof OTP_TYPES)[number];

const email = emailField.transform((v) => v.toLowerCase());
const otp = z.string().max(64);

export const sendOtpBody = z.object({ email, type: z.enum(OTP_TYPES) });
export const requestResetBody = z.object({ email });
export const checkOtpBody = z.object({ email, type: z.enum(OTP_TYPES), otp });
export const verifyEmailBody = z.object({ email, otp });
export const signInOtpBody = z.object({ email, otp, name: z.string().max(200).optional(), image: z.string().max(2048).optional() });
export const resetPasswordBody = z.object({ email, otp, password: z.string().max(1024) });

export type SignInOtpInput = z.output<typeof signInOtpBody>;
