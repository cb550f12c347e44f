import { z } from '@slipway/config';
import { optionalUrl } from '../../common/index.js';

export const socialSignInBody = z.object({
  provider: z.string().min(1).max(50),
  callbackURL: optionalUrl,
  errorCallbackURL: optionalUrl,
  newUserCallbackURL: optionalUrl,
  disableRedirect: z.boolean().optional(),
  /** Asked for beside the provider's own (Better Auth's `scopes`); each an OAuth scope token. */
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/))
    .max(20)
    .optional(),
});
export type SocialSignInInput = z.output<typeof socialSignInBody>;
