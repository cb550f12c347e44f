import { z } from 'zod';

const provider = z
  .object({
    clientId: z.string().trim().min(1, 'enter the client id of your OAuth app').max(500),
    clientSecret: z.string().trim().min(1, 'enter the client secret of your OAuth app').max(2000),
  })
  .strict()
  .nullable();

/** A partial update: absent fields stay as they are; a provider set to null is removed. */
export const SignInSettingsBody = z
  .object({
    requireEmailVerification: z.boolean().optional(),
    allowLocalhost: z.boolean().optional(),
    socialProviders: z.object({ github: provider.optional(), google: provider.optional() }).strict().optional(),
  })
  .strict();

export type SignInSettingsInput = z.output<typeof SignInSettingsBody>;
