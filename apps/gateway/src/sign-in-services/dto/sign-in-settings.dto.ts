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
    twoFactor: z
      .object({ enabled: z.boolean(), issuer: z.string().trim().min(1, 'enter the name authenticator apps show').max(100).optional() })
      .strict()
      .optional(),
    passkey: toggle.optional(),
    magicLink: toggle.optional(),
    emailOTP: toggle.optional(),
    organization: z.object({ enabled: z.boolean(), allowUserToCreateOrganization: z.boolean().optional() }).strict().optional(),
    admin: toggle.optional(),
  })
  .strict();

/** A generic OpenID Connect provider: its issuer (https; the same SSRF rule as the sign-in service's, checked by the service), the owner's OAuth client. */
const oidcProvider = z
  .object({
    issuer: z.string().trim().min(1, 'enter the issuer’s https URL').max(500),
    clientId: z.string().trim().min(1, 'enter the client id of your OAuth app').max(500),
    clientSecret: z.string().trim().min(1, 'enter the client secret of your OAuth app').max(2000),
  })
  .strict()
  .nullable();

/** Provider ids: `[a-z0-9-]{1,32}`, not a built-in provider's. */
export const OIDC_PROVIDER_ID = /^[a-z0-9-]{1,32}$/;
const oidcProviders = z
  .record(
    z
      .string()
      .regex(OIDC_PROVIDER_ID, 'a provider id is 1 to 32 of a-z, 0-9 and -')
      .refine((id) => id !== 'github' && id !== 'google', 'github and google are social providers, not OpenID Connect ones'),
    oidcProvider,
  )
  .refine((r) => Object.keys(r).length <= 20, 'at most 20 providers per update');

/** A partial update: absent fields stay as they are; a provider set to null is removed. */
export const SignInSettingsBody = z
  .object({
    requireEmailVerification: z.boolean().optional(),
    allowLocalhost: z.boolean().optional(),
    socialProviders: z.object({ github: provider.optional(), google: provider.optional() }).strict().optional(),
    plugins: plugins.optional(),
    oidcProviders: oidcProviders.optional(),
  })
  .strict();

export type SignInSettingsInput = z.output<typeof SignInSettingsBody>;
