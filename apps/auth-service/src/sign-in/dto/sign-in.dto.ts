import { z } from '@slipway/config';
import { emailField, optionalUrl } from '../../common/index.js';

export const signInBody = z.object({
  email: emailField,
  password: z.string().min(1).max(1024),
  rememberMe: z.boolean().optional(),
  callbackURL: optionalUrl,
});
export type SignInInput = z.output<typeof signInBody>;
