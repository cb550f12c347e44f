import { z } from '@slipway/config';
import { optionalUrl } from '../../common/index.js';

const scopes = z
  .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/))
  .max(20)
  .optional();

/** genericOAuthClient's `signIn.oauth2` (Better Auth ≤ 1.6); `requestSignUp` is accepted and changes nothing (sign-up is never off here). */
export const oauth2SignInBody = z.object({
  providerId: z.string().min(1).max(50),
  callbackURL: optionalUrl,
  errorCallbackURL: optionalUrl,
  newUserCallbackURL: optionalUrl,
  disableRedirect: z.boolean().optional(),
  scopes,
  requestSignUp: z.boolean().optional(),
});
export type OAuth2SignInInput = z.output<typeof oauth2SignInBody>;

/** genericOAuthClient's `oauth2.link`. */
export const oauth2LinkBody = z.object({
  providerId: z.string().min(1).max(50),
  callbackURL: z.string().max(2048),
  errorCallbackURL: optionalUrl,
  disableRedirect: z.boolean().optional(),
  scopes,
});
export type OAuth2LinkInput = z.output<typeof oauth2LinkBody>;
