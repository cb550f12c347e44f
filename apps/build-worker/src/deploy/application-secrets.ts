import { Inject, Injectable } from '@nestjs/common';
import { isPublicName } from '@slipway/analyzer';
import { injectedEnv } from '@slipway/sign-in-core';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { DeploymentsRepository, PlatformInfrastructure, type ApplicationId } from '@slipway/platform-data';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import type { ApplicationBuildContext } from '../pipeline/deploy-context.js';

export type { ApplicationBuildContext };

/** Decrypts an application's secrets for one deployment; values live only in memory. */
@Injectable()
export class ApplicationSecrets {
  private readonly keyring: Keyring;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    platform: PlatformInfrastructure,
    private readonly deployments: DeploymentsRepository,
  ) {
    this.keyring = platform.keyring;
  }

  async load(applicationId: ApplicationId): Promise<ApplicationBuildContext> {
    const app = await this.deployments.inputs.forBuild(applicationId);
    // A preview's values are its parent's (sealed for the parent), of the `preview` scope.
    const sealedFor = app.sealedFor;
    const secrets = app.secrets.map((s) => ({
      name: s.name,
      value: decryptEnvelopeToString(this.keyring, s.value, envelopeBinding.secret(sealedFor, s.name, s.scope)),
    }));
    const cookieSecret = app.cookieSecret ? decryptEnvelopeToString(this.keyring, app.cookieSecret, envelopeBinding.cookieSecret(sealedFor)) : null;
    const dbPassword = app.database ? decryptEnvelopeToString(this.keyring, app.database.password, envelopeBinding.databasePassword(sealedFor)) : null;
    const buildVariables: Record<string, string> = {};
    for (const s of secrets) if (isPublicName(s.name)) buildVariables[s.name] = s.value;
    const injected = injectedEnv(
      { slug: app.slug, cookieSecret, database: null, projectSecretNames: secrets.map((s) => s.name) },
      { authPublicUrl: this.config.AUTH_PUBLIC_URL, appDatabasesUrl: this.config.DATABASE_URL },
    );
    for (const [name, value] of Object.entries(injected.buildTime)) if (!(name in buildVariables)) buildVariables[name] = value;
    return {
      slug: app.slug,
      signInApplicationId: sealedFor,
      environment: app.environment,
      secretNames: secrets.map((s) => s.name),
      signInEnabled: cookieSecret !== null,
      redactable: [
        ...secrets,
        ...(cookieSecret ? [{ name: 'SERVICE_AUTH_COOKIE_SECRET', value: cookieSecret }] : []),
        ...(dbPassword ? [{ name: 'DATABASE_PASSWORD', value: dbPassword }] : []),
      ],
      scanSecrets: secrets,
      cookieSecret,
      buildVariables,
    };
  }
}
