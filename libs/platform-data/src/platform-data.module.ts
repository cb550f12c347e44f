import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { ApplicationsRepository } from './applications/applications.repository.js';
import { BackupsRepository } from './backups/backups.repository.js';
import { CredentialsRepository } from './credentials/credentials.repository.js';
import { DeploymentsRepository } from './deployments/deployments.repository.js';
import { EmailsRepository } from './emails/emails.repository.js';
import { PlatformInfrastructure, type PlatformSettings, type PlatformWiring } from './infrastructure.js';
import { OwnersRepository } from './owners/owners.repository.js';
import { SecretsRepository } from './secrets/secrets.repository.js';
import { SignInServicesRepository } from './sign-in-services/sign-in-services.repository.js';

export const PLATFORM_REPOSITORIES = [
  ApplicationsRepository,
  BackupsRepository,
  CredentialsRepository,
  DeploymentsRepository,
  EmailsRepository,
  OwnersRepository,
  SecretsRepository,
  SignInServicesRepository,
] as const;

/** The repositories over one infrastructure, for processes without Nest (the edge, the CLI, tools). */
export interface PlatformData {
  readonly infrastructure: PlatformInfrastructure;
  readonly applications: ApplicationsRepository;
  readonly backups: BackupsRepository;
  readonly credentials: CredentialsRepository;
  readonly deployments: DeploymentsRepository;
  readonly emails: EmailsRepository;
  readonly owners: OwnersRepository;
  readonly secrets: SecretsRepository;
  readonly signInServices: SignInServicesRepository;
  close(): Promise<void>;
}

export function openPlatformData(settings: PlatformSettings, wiring: PlatformWiring): PlatformData {
  const infrastructure = PlatformInfrastructure.open(settings, wiring);
  return {
    infrastructure,
    applications: new ApplicationsRepository(infrastructure),
    backups: new BackupsRepository(infrastructure),
    credentials: new CredentialsRepository(infrastructure),
    deployments: new DeploymentsRepository(infrastructure),
    emails: new EmailsRepository(infrastructure),
    owners: new OwnersRepository(infrastructure),
    secrets: new SecretsRepository(infrastructure),
    signInServices: new SignInServicesRepository(infrastructure),
    close: () => infrastructure.close(),
  };
}

@Injectable()
class InfrastructureCloser implements OnApplicationShutdown {
  constructor(@Inject(PlatformInfrastructure) private readonly platform: PlatformInfrastructure) {}
  onApplicationShutdown(): Promise<void> {
    return this.platform.close();
  }
}

/**
 * Registered once by each Nest app's root module, global like configuration: any provider
 * injects `PlatformInfrastructure` (pool, Prisma, Redis, blobs, keyring) or a repository.
 */
@Module({})
export class PlatformDataModule {
  static register(settings: PlatformSettings, wiring: PlatformWiring): DynamicModule {
    return {
      module: PlatformDataModule,
      global: true,
      providers: [
        { provide: PlatformInfrastructure, useFactory: () => PlatformInfrastructure.open(settings, wiring) },
        InfrastructureCloser,
        ...PLATFORM_REPOSITORIES,
      ],
      exports: [PlatformInfrastructure, ...PLATFORM_REPOSITORIES],
    };
  }
}
