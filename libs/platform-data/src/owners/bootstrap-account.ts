import { Prisma, type Plan } from '@slipway/platform-schema';
import { SlugTakenError } from '../applications/applications.repository.js';
import { insertBootstrapCredentials, type IssuedCredential } from '../credentials/bootstrap-credentials.js';
import { asApplicationId, asOwnerId, type ApplicationId, type OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

export interface BootstrapAccountInput {
  /** Normalised (lower case). */
  email: string;
  /** Applied to a new owner, and to an existing one when given; a new owner without it is on `free`. */
  plan?: Plan;
  /** The application is found by this name among the owner's, or created with it. */
  appName: string;
  /** Addresses to try for a new application, in order; all taken: SlugTakenError. */
  slugCandidates: Iterable<string>;
  apiKey: IssuedCredential;
  personalAccessToken: IssuedCredential;
}

export interface BootstrappedAccount {
  owner: { id: OwnerId; plan: Plan; created: boolean };
  application: { id: ApplicationId; slug: string; created: boolean };
}

/**
 * Owner (found by email or created), application (found by name for that owner, oldest first, or
 * created at the first free candidate address) and a fresh API key and personal access token, in
 * one serializable transaction: a run either makes all of it or nothing.
 */
export function bootstrapAccount(platform: PlatformInfrastructure, input: BootstrapAccountInput): Promise<BootstrappedAccount> {
  return platform.prisma.$transaction(
    async (tx) => {
      let owner = await tx.owner.findUnique({ where: { email: input.email } });
      const ownerCreated = !owner;
      if (!owner) owner = await tx.owner.create({ data: { email: input.email, plan: input.plan ?? 'free' } });
      else if (input.plan && owner.plan !== input.plan) owner = await tx.owner.update({ where: { id: owner.id }, data: { plan: input.plan } });

      let application = await tx.application.findFirst({ where: { ownerId: owner.id, name: input.appName }, orderBy: { createdAt: 'asc' } });
      const applicationCreated = !application;
      if (!application)
        application = await tx.application.create({ data: { ownerId: owner.id, name: input.appName, slug: await freeSlug(tx, input.slugCandidates) } });

      const ownerId = asOwnerId(owner.id);
      const applicationId = asApplicationId(application.id);
      await insertBootstrapCredentials(tx, ownerId, applicationId, { apiKey: input.apiKey, personalAccessToken: input.personalAccessToken });
      return {
        owner: { id: ownerId, plan: owner.plan, created: ownerCreated },
        application: { id: applicationId, slug: application.slug, created: applicationCreated },
      };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.Serializable },
  );
}

async function freeSlug(tx: Prisma.TransactionClient, candidates: Iterable<string>): Promise<string> {
  for (const candidate of candidates) {
    if (!(await tx.application.findUnique({ where: { slug: candidate }, select: { id: true } }))) return candidate;
  }
  throw new SlugTakenError();
}
