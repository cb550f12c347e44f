import { Inject, Injectable } from '@nestjs/common';
import { PROJECT_OWNED_SIGN_IN_VARIABLES, envFileText, provisionSignInTenant, signInVariables, syncPoolerWithPlatform } from '@slipway/sign-in-core';
import { LIMITS } from '@slipway/contract';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import {
  ApplicationsRepository,
  PlatformInfrastructure,
  SignInServicesRepository,
  asApplicationId,
  asOwnerId,
  type ApplicationId,
  type OwnerId,
} from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { GATEWAY_CONFIG, appDatabasesAdminUrl, type GatewayConfig } from '../config.js';
import { isUuid } from '../common/index.js';
import { signInRecord } from './sign-in-record.js';
import type { SignInPrincipal } from './sign-in-principal.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';

type StoredApplication = NonNullable<Awaited<ReturnType<SignInServicesRepository['findApplication']>>>;
/** An application the caller may see, its ids branded once that was checked. */
type Application = Omit<StoredApplication, 'id' | 'ownerId'> & { id: ApplicationId; ownerId: OwnerId };

@Injectable()
export class SignInServicesService {
  private readonly keyring: Keyring;

  constructor(
    platform: PlatformInfrastructure,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly signInServices: SignInServicesRepository,
    private readonly applications: ApplicationsRepository,
    private readonly tenantChanged: TenantChangedPublisher,
  ) {
    this.keyring = platform.keyring;
  }

  /** Switches sign-in on (once; later and concurrent calls get the same record). */
  async enable(principal: SignInPrincipal, applicationId: unknown) {
    const app = await this.visibleApplication(principal, applicationId);
    const owned = app.secrets.map((s) => s.name).sort()[0];
    if (owned) {
      throw new ApiException(
        'auth_owned_by_project',
        `The project sets its own ${owned}, so the platform leaves sign-in alone. Remove that secret to use the platform's sign-in service.`,
        { variable: owned },
      );
    }
    const tenant = await this.signInServices.withOwnerDatabasesLock(app.ownerId, async () => {
      if (!app.database) {
        const allowed = LIMITS.databasesPerPlan[app.owner.plan];
        const used = await this.applications.databases.countForOwner(app.ownerId);
        // Re-read under the lock: a concurrent call for this application may just have created it.
        const fresh = await this.find(app.id);
        if (!fresh?.database && used >= allowed) {
          throw new ApiException(
            'database_limit_reached',
            `The ${app.owner.plan} plan allows ${allowed} application database${allowed === 1 ? '' : 's'}, and ${used} ${used === 1 ? 'is' : 'are'} in use. Sign-in needs one; upgrade the plan or remove a database.`,
            { plan: app.owner.plan, allowed, used },
          );
        }
      }
      return provisionSignInTenant({
        platform: { applications: this.applications, signInServices: this.signInServices },
        keyring: this.keyring,
        adminDatabaseUrl: appDatabasesAdminUrl(this.config),
        appsDomains: this.config.APPS_DOMAIN,
        appsScheme: this.config.APPS_SCHEME,
        applicationId: app.id,
        connectionLimit: this.config.APP_DATABASE_CONNECTION_LIMIT,
      });
    });
    await this.tellPooler();
    if (tenant.created) await this.tenantChanged.publish(app.id);
    const stored = await this.find(app.id);
    return {
      created: tenant.created,
      record: signInRecord(this.config.AUTH_PUBLIC_URL, app, stored!.signInService!, await this.applications.trustedOrigins.list(app.id)),
    };
  }

  /**
   * The platform's PgBouncer must know the application's database before the app can reach it
   * (apps reach their database through PgBouncer only). Done at every switch-on (idempotent), so
   * a call that failed here is mended by calling again.
   */
  private async tellPooler(): Promise<void> {
    const dir = this.config.APP_DATABASES_POOLER_DIR;
    const adminUrl = this.config.APP_DATABASES_POOLER_ADMIN_URL;
    if (!dir || !adminUrl) return;
    const server = new URL(appDatabasesAdminUrl(this.config));
    try {
      await syncPoolerWithPlatform(
        { dir, adminUrl, server: { host: server.hostname, port: Number(server.port || 5432) } },
        this.applications.databases,
        this.keyring,
      );
    } catch (error) {
      throw new ApiException(
        'database_pooler_unavailable',
        `The application's database was created, but the platform's connection pooler could not be told about it (${(error as Error).message.split(adminUrl).join('***')}). Try again in a moment.`,
      );
    }
  }

  /** The variables as `.env` text; holds the cookie secret. */
  async envText(principal: SignInPrincipal, applicationId: unknown): Promise<string> {
    const app = await this.visibleApplication(principal, applicationId);
    if (!app.signInService) throw new ApiException('not_found', 'Sign-in is not on for this application; switch it on with POST /api/v1/auth?applicationId=….');
    const secret = decryptEnvelopeToString(this.keyring, app.signInService.cookieSecret, envelopeBinding.cookieSecret(app.id));
    return envFileText(signInVariables(this.config.AUTH_PUBLIC_URL, app.slug, secret));
  }

  /** The sign-in services this credential can see, without secrets. */
  async list(principal: SignInPrincipal) {
    const apps = await this.signInServices.listServices(
      principal.kind === 'owner' ? { ownerId: asOwnerId(principal.ownerId) } : { applicationId: asApplicationId(principal.applicationId) },
    );
    const origins = await this.applications.trustedOrigins.listOf(apps.map((a) => asApplicationId(a.id)));
    return {
      services: apps.map((app) =>
        signInRecord(
          this.config.AUTH_PUBLIC_URL,
          app,
          app.signInService!,
          origins.filter((o) => o.applicationId === app.id).map((o) => o.origin),
        ),
      ),
    };
  }

  /** Unknown, malformed and foreign applications all look the same: 404. */
  private async visibleApplication(principal: SignInPrincipal, applicationId: unknown): Promise<Application> {
    if (typeof applicationId !== 'string' || !applicationId) throw new ApiException('bad_request', 'Pass the application as ?applicationId=<id>.');
    const app = isUuid(applicationId) ? await this.find(asApplicationId(applicationId)) : null;
    const visible = app && (principal.kind === 'owner' ? app.ownerId === principal.ownerId : app.id === principal.applicationId);
    if (!app || !visible) throw new ApiException('not_found', 'No such application is visible to this token.');
    return { ...app, id: asApplicationId(app.id), ownerId: asOwnerId(app.ownerId) };
  }

  private find(applicationId: ApplicationId) {
    return this.signInServices.findApplication(applicationId, PROJECT_OWNED_SIGN_IN_VARIABLES);
  }
}
