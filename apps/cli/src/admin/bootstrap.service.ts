import { PLANS, slugify, type PlanName } from '@slipway/contract';
import { issueToken } from '@slipway/crypto';
import { Prisma, type PrismaClient } from '@slipway/db';

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
export async function bootstrap(prisma: PrismaClient, input: BootstrapInput, addresses: PlatformAddresses): Promise<BootstrapResult> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new BootstrapError(`--email: "${input.email}" is not an email address`);
  const appName = input.appName.trim();
  if (!appName || appName.length > 100) throw new BootstrapError('--app: give the application a name of 1 to 100 characters');
  if (input.plan && !PLANS.includes(input.plan)) throw new BootstrapError(`--plan: must be one of ${PLANS.join(', ')}`);

  const apiKey = issueToken('api_key');
  const pat = issueToken('personal_access_token');

  return prisma.$transaction(
    async (tx) => {
      let owner = await tx.owner.findUnique({ where: { email } });
      const ownerCreated = !owner;
      if (!owner) owner = await tx.owner.create({ data: { email, plan: input.plan ?? 'free' } });
      else if (input.plan && owner.plan !== input.plan) owner = await tx.owner.update({ where: { id: owner.id }, data: { plan: input.plan } });

      let application = await tx.application.findFirst({ where: { ownerId: owner.id, name: appName }, orderBy: { createdAt: 'asc' } });
      const applicationCreated = !application;
      if (!application) {
        application = await tx.application.create({ data: { ownerId: owner.id, name: appName, slug: await freeSlug(tx, slugify(appName)) } });
      }
      await tx.apiKey.create({ data: { applicationId: application.id, name: 'bootstrap', prefix: apiKey.prefix, keyHash: apiKey.hash } });
      await tx.personalAccessToken.create({ data: { ownerId: owner.id, name: 'bootstrap', prefix: pat.prefix, tokenHash: pat.hash } });

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
        created: { owner: ownerCreated, application: applicationCreated },
      };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.Serializable },
  );
}

async function freeSlug(tx: Prisma.TransactionClient, base: string): Promise<string> {
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, 45)}-${n}`;
    if (!(await tx.application.findUnique({ where: { slug: candidate }, select: { id: true } }))) return candidate;
  }
  throw new BootstrapError(`no free address left for "${base}"`);
}

