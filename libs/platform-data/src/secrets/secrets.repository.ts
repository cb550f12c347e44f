import { Injectable } from '@nestjs/common';
import type { ApplicationId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';

export class TooManySecretsError extends Error {
  override readonly name = 'TooManySecretsError';
}

/** Where a secret applies: `all` (production and previews), or one environment. */
export type SecretScope = 'all' | SecretEnvironment;
export type SecretEnvironment = 'production' | 'preview';
export const SECRET_SCOPES: readonly SecretScope[] = ['all', 'production', 'preview'];

/** A secret as stored: its name, scope and value sealed under the master keyring (bound to application, name and scope). */
export interface SecretEnvelope {
  name: string;
  scope: SecretScope;
  value: Buffer;
}

/**
 * Applications' secrets, stored as envelopes under the master keyring.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class SecretsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /** The names set, each once, whatever its scopes. */
  async names(applicationId: ApplicationId): Promise<string[]> {
    return [...new Set((await this.scopes(applicationId)).map((r) => r.name))];
  }

  /** Every name with the scopes it has a value in. */
  async scopes(applicationId: ApplicationId): Promise<{ name: string; scope: SecretScope }[]> {
    const rows = await this.platform.prisma.secret.findMany({
      where: { applicationId },
      select: { name: true, scope: true },
      orderBy: [{ name: 'asc' }, { scope: 'asc' }],
    });
    return rows.map((r) => ({ name: r.name, scope: r.scope as SecretScope }));
  }

  /**
   * The secrets an environment gets, still sealed (the caller opens them with the keyring): each
   * name once, the environment's own value where it has one, else the `all` one.
   */
  async envelopes(applicationId: ApplicationId, environment: SecretEnvironment = 'production'): Promise<SecretEnvelope[]> {
    const { rows } = await this.platform.pool.query<SecretEnvelope>(
      `SELECT DISTINCT ON (name) name, scope, value FROM secrets WHERE application_id = $1::uuid AND scope IN ('all', $2)
        ORDER BY name, scope = 'all'`,
      [applicationId, environment],
    );
    return rows;
  }

  /**
   * Applies upserts (sealed values, of `scope`) and deletes in one transaction and answers the
   * names now set; rolls everything back when the application would hold more than `maxCount`
   * values. A delete in scope `all` removes the name in every scope (what `null` in
   * `PUT /api/v1/secrets` means); in an environment's scope, only that environment's value.
   */
  async apply(
    applicationId: ApplicationId,
    upserts: Map<string, Uint8Array<ArrayBuffer>>,
    deletes: string[],
    maxCount: number,
    scope: SecretScope = 'all',
  ): Promise<string[]> {
    return this.platform.prisma.$transaction(async (tx) => {
      if (deletes.length) await tx.secret.deleteMany({ where: { applicationId, name: { in: deletes }, ...(scope === 'all' ? {} : { scope }) } });
      for (const [name, value] of upserts) {
        await tx.secret.upsert({
          where: { applicationId_name_scope: { applicationId, name, scope } },
          create: { applicationId, name, scope, value },
          update: { value },
        });
      }
      const rows = await tx.secret.findMany({ where: { applicationId }, select: { name: true }, orderBy: { name: 'asc' } });
      if (rows.length > maxCount) throw new TooManySecretsError();
      return [...new Set(rows.map((r) => r.name))];
    });
  }
}
