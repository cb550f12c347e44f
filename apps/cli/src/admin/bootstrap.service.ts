import { PLANS, slugify, type PlanName } from '@slipway/contract';
import { issueToken } from '@slipway/crypto';
import { SlugTakenError, type OwnersRepository } from '@slipway/platform-data';

export interface BootstrapInput {
  email: string;
  appName: string;
  /** Only applied when given: sets the plan of a new or existing owner. */
  plan?: PlanName;
}

export interface PlatformAddresses {
  publicUrl: string;
  authPublicUrl: string;
  appsDomain: string;
  appsScheme: 'http' | 'https';
}

export interface BootstrapResult {
  ownerId: string;
  applicationId: string;
  slug: string;
  apiKey: string;
  ownerToken: string;
  baseUrl: string;
  authBaseUrl: string;
  appUrl: string;
  plan: PlanName;
  created: { owner: boolean; application: boolean };
}

export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Operator path to a working account: the owner (created if missing), the application (created
 * if missing, by name for that owner) and a fresh project API key and personal access token.
 * Idempotent for owner and application; each run issues new credentials.
 */
export async function bootstrap(owners: OwnersRepository, input: BootstrapInput, addresses: PlatformAddresses): Promise<BootstrapResult> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new BootstrapError(`--email: "${input.email}" is not an email address`);
  const appName = input.appName.trim();
  if (!appName || appName.length > 100) throw new BootstrapError('--app: give the application a name of 1 to 100 characters');
  if (input.plan && !PLANS.includes(input.plan)) throw new BootstrapError(`--plan: must be one of ${PLANS.join(', ')}`);

  const apiKey = issueToken('api_key');
  const pat = issueToken('personal_access_token');

  const base = slugify(appName);
  let account;
  try {
    account = await owners.bootstrapAccount({ email, plan: input.plan, appName, slugCandidates: slugCandidates(base), apiKey, personalAccessToken: pat });
  } catch (error) {
    if (error instanceof SlugTakenError) throw new BootstrapError(`no free address left for "${base}"`);
    throw error;
  }
  const { owner, application } = account;
  const primaryDomain = addresses.appsDomain.split(',')[0]!.trim();
  return {
    ownerId: owner.id,
    applicationId: application.id,
    slug: application.slug,
    apiKey: apiKey.token,
    ownerToken: pat.token,
    baseUrl: addresses.publicUrl,
    authBaseUrl: `${addresses.authPublicUrl}/a/${application.slug}`,
    appUrl: `${addresses.appsScheme}://${application.slug}.${primaryDomain}`,
    plan: owner.plan,
    created: { owner: owner.created, application: application.created },
  };
}

/** `base`, then `base-2`, `base-3`… (cut so the suffix fits), tried in order until one is free. */
function* slugCandidates(base: string): Generator<string> {
  for (let n = 1; n < 1000; n++) yield n === 1 ? base : `${base.slice(0, 45)}-${n}`;
}
