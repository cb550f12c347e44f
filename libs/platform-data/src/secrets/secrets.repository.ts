import { Injectable } from '@nestjs/common';
import type { ApplicationId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';

export class TooManySecretsError extends Error {
  override readonly name = 'TooManySecretsError';
}

/** A secret as stored: its name and its value sealed under the master keyring (bound to application and name). */
export interface SecretEnvelope {
  name: string;
  value: Buffer;
}

/**
 * Applications' secrets, stored as envelopes under the master keyring.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class SecretsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}

  async names(applicationId: ApplicationId): Promise<string[]> {
    const rows = await this.platform.prisma.secret.findMany({ where: { applicationId }, select: { name: true }, orderBy: { name: 'asc' } });
    return rows.map((r) => r.name);
  }

  /** Every secret of the application, still sealed: the caller opens them with the keyring. */
  async envelopes(applicationId: ApplicationId): Promise<SecretEnvelope[]> {
    const { rows } = await this.platform.pool.query<SecretEnvelope>('SELECT name, value FROM secrets WHERE application_id = $1::uuid', [applicationId]);
    return rows;
  }

  /**
   * Applies upserts (sealed values) and deletes in one transaction and answers the names now
   * set; rolls everything back when the application would hold more than `maxCount`.
   */
  async apply(applicationId: ApplicationId, upserts: Map<string, Uint8Array<ArrayBuffer>>, deletes: string[], maxCount: number): Promise<string[]> {
    return this.platform.prisma.$transaction(async (tx) => {
      if (deletes.length) await tx.secret.deleteMany({ where: { applicationId, name: { in: deletes } } });
      for (const [name, value] of upserts) {
        await tx.secret.upsert({
          where: { applicationId_name: { applicationId, name } },
          create: { applicationId, name, value },
          update: { value },
        });
      }
      const rows = await tx.secret.findMany({ where: { applicationId }, select: { name: true }, orderBy: { name: 'asc' } });
      if (rows.length > maxCount) throw new TooManySecretsError();
      return rows.map((r) => r.name);
    });
  }
}
