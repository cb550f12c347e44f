import { z } from '@slipway/config';
import { emailField, optionalUrl } from '../../common/index.js';

export const signUpBody = z.object({
  name: z.string().trim().min(1).max(200),
  email: emailField,
  password: z.string().max(1024),
  image: z.string().max(2048).nullish(),
  callbackURL: optionalUrl,
  rememberMe: z.boolean().optional(),
});
export type SignUpInput = z.output<typeof signUpBody>;
