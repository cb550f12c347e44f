import { z } from '@slipway/config';
import { emailField } from '../../common/email-field.js';
import { optionalUrl } from '../../common/validation.js';

export const signInBody = z.object({
  email: emailField,
  password: z.string().min(1).max(1024),
  rememberMe: z.boolean().optional(),
  callbackURL: optionalUrl,
});
export type SignInInput = z.output<typeof signInBody>;
