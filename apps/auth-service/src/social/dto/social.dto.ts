import { z } from '@slipway/config';
import { optionalUrl } from '../../common/index.js';

export const socialSignInBody = z.object({
  provider: z.string().min(1).max(50),
  callbackURL: optionalUrl,
  errorCallbackURL: optionalUrl,
  newUserCallbackURL: optionalUrl,
  disableRedirect: z.boolean().optional(),
});
export type SocialSignInInput = z.output<typeof socialSignInBody>;
