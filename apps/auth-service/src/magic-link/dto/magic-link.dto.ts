import { z } from '@slipway/config';
import { emailField, optionalUrl } from '../../common/index.js';

/** `POST /sign-in/magic-link` (the redirect targets are checked and normalised by the pipeline first). */
export const magicLinkRequestBody = z.object({
  email: emailField,
  name: z.string().max(200).optional(),
  callbackURL: optionalUrl,
  newUserCallbackURL: optionalUrl,
  errorCallbackURL: optionalUrl,
  /** Better Auth hands it to the app's `sendMagicLink`; the platform's mailer has no use for it. */
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type MagicLinkRequest = z.output<typeof magicLinkRequestBody>;

/** `GET /magic-link/verify` (the emailed link). */
export const magicLinkVerifyQuery = z.object({
  token: z.string().max(200),
  callbackURL: optionalUrl,
  newUserCallbackURL: optionalUrl,
  errorCallbackURL: optionalUrl,
});
export type MagicLinkVerify = z.output<typeof magicLinkVerifyQuery>;
