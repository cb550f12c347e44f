import type { Prisma } from '@slipway/platform-schema';
import type { ApplicationId, OwnerId } from '../ids.js';

/** A credential as stored: its public prefix and the hash of the whole token, never the token. */
export interface IssuedCredential {
  prefix: string;
  hash: string;
}

/**
 * The project API key and personal access token that `slipway admin bootstrap` issues, written
 * inside the caller's transaction (OwnersRepository.bootstrapAccount makes owner, application and
 * both credentials atomically). Named `bootstrap`, like the dashboard shows them.
 */
export async function insertBootstrapCredentials(
  tx: Prisma.TransactionClient,
  ownerId: OwnerId,
  applicationId: ApplicationId,
  issued: { apiKey: IssuedCredential; personalAccessToken: IssuedCredential },
): Promise<void> {
  await tx.apiKey.create({ data: { applicationId, name: 'bootstrap', prefix: issued.apiKey.prefix, keyHash: issued.apiKey.hash } });
  await tx.personalAccessToken.create({
    data: { ownerId, name: 'bootstrap', prefix: issued.personalAccessToken.prefix, tokenHash: issued.personalAccessToken.hash },
  });
}
