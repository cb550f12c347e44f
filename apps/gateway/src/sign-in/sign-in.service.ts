import { Inject, Injectable } from '@nestjs/common';
import { envFileText, provisionSignInTenant, signInVariables } from '@slipway/auth-core';
import { LIMITS } from '@slipway/contract';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { PlatformInfrastructure } from '@slipway/platform-data';
import { ApiException } from '@slipway/server';
import { PrismaService } from '../common/prisma.service.js';
import { GATEWAY_CONFIG, appDatabasesAdminUrl, type GatewayConfig } from '../config.js';
import { isUuid } from '../common/ids.js';
import { signInRecord } from './sign-in-record.js';
import type { SignInPrincipal } from './sign-in-principal.js';
import { SignInRepository } from './sign-in.repository.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';

type Application = NonNullable<Awaited<ReturnType<SignInRepository['findApplication']>>>;

@Injectable()
export class SignInService {
  private readonly keyring: Keyring;

  constructor(
    platform: PlatformInfrastructure,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly repository: SignInRepository,
    private readonly tenantChanged: TenantChangedPublisher,
    /** Handed to auth-core's provisioning, which owns those writes. */
    private readonly prisma: PrismaService,
  ) {
    this.keyring = platform.keyring;
  }

  /** Switches sign-in on (once; later and concurrent calls get the same record). */
  async enable(principal: SignInPrincipal, applicationId: unknown) {
    const app = await this.visibleApplication(principal, applicationId);
    const owned = app.secrets.map((s) => s.name).sort()[0];
    if (owned) {
      throw new ApiException('auth_owned_by_project', `The project sets its own ${owned}, so the platform leaves sign-in alone. Remove that secret to use the platform's sign-in service.`, { variable: owned });
    }
    const tenant = await this.repository.withOwnerLock(app.ownerId, async () => {
      if (!app.database) {
        const allowed = LIMITS.databasesPerPlan[app.owner.plan];
        const used = await this.repository.countOwnerDatabases(app.ownerId);
        // Re-read under the lock: a concurrent call for this application may just have created it.
        const fresh = await this.repository.findApplication(app.id);
        if (!fresh?.database && used >= allowed) {
          throw new ApiException('database_limit_reached', `The ${app.owner.plan} plan allows ${allowed} application database${allowed === 1 ? '' : 's'}, and ${used} ${used === 1 ? 'is' : 'are'} in use. Sign-in needs one; upgrade the plan or remove a database.`, { plan: app.owner.plan, allowed, used });
        }
      }
      return provisionSignInTenant({
        prisma: this.prisma.client,
        keyring: this.keyring,
        platformDatabaseUrl: this.config.DATABASE_URL,
        adminDatabaseUrl: appDatabasesAdminUrl(this.config),
        appsDomains: this.config.APPS_DOMAIN,
        appsScheme: this.config.APPS_SCHEME,
        applicationId: app.id,
      });
    });
    if (tenant.created) await this.tenantChanged.publish(app.id);
    const stored = await this.repository.findApplication(app.id);
    return { created: tenant.created, record: signInRecord(this.config.AUTH_PUBLIC_URL, app, stored!.signInService!, await this.repository.origins(app.id)) };
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
    const apps = await this.repository.listServices(principal.kind === 'owner' ? { ownerId: principal.ownerId } : { applicationId: principal.applicationId });
    const origins = await this.repository.originsOf(apps.map((a) => a.id));
    return {
      services: apps.map((app) =>
        signInRecord(this.config.AUTH_PUBLIC_URL, app, app.signInService!, origins.filter((o) => o.applicationId === app.id).map((o) => o.origin)),
      ),
    };
  }

  /** Unknown, malformed and foreign applications all look the same: 404. */
  private async visibleApplication(principal: SignInPrincipal, applicationId: unknown): Promise<Application> {
    if (typeof applicationId !== 'string' || !applicationId) throw new ApiException('bad_request', 'Pass the application as ?applicationId=<id>.');
    const app = isUuid(applicationId) ? await this.repository.findApplication(applicationId) : null;
    const visible = app && (principal.kind === 'owner' ? app.ownerId === principal.ownerId : app.id === principal.applicationId);
    if (!app || !visible) throw new ApiException('not_found', 'No such application is visible to this token.');
    return app;
  }
}
