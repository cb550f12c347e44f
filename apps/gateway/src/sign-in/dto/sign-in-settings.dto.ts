import { z } from 'zod';

const provider = z
  .object({
    clientId: z.string().trim().min(1, 'enter the client id of your OAuth app').max(500),
    clientSecret: z.string().trim().min(1, 'enter the client secret of your OAuth app').max(2000),
  })
  .strict()
  .nullable();

const toggle = z.object({ enabled: z.boolean() }).strict();

/** Each plugin's switch and options; a plugin left out stays as it is. */
const plugins = z
  .object({
    twoFactor: z.object({ enabled: z.boolean(), issuer: z.string().trim().min(1, 'enter the name authenticator apps show').max(100).optional() }).strict().optional(),
    passkey: toggle.optional(),
    magicLink: toggle.optional(),
    emailOTP: toggle.optional(),
    organization: z.object({ enabled: z.boolean(), allowUserToCreateOrganization: z.boolean().optional() }).strict().optional(),
    admin: toggle.optional(),
  })
  .strict();

/** A partial update: absent fields stay as they are; a provider set to null is removed. */
export const SignInSettingsBody = z
  .object({
    requireEmailVerification: z.boolean().optional(),
    allowLocalhost: z.boolean().optional(),
    socialProviders: z.object({ github: provider.optional(), google: provider.optional() }).strict().optional(),
    plugins: plugins.optional(),
  })
  .strict();

export type SignInSettingsInput = z.output<typeof SignInSettingsBody>;
