import { Inject, Injectable } from '@nestjs/common';
import { tenantDatabaseUrl } from '@slipway/sign-in-core';
import { SIGN_IN_PLUGINS, type OutboxEmailView, type ServerView, type SignInInfo, type SignInPluginsView, type SignInUserView } from '@slipway/contract';
import { decryptEnvelopeToString, encryptEnvelope, envelopeBinding, type Keyring } from '@slipway/crypto';
import { ApplicationsRepository, EmailsRepository, PlatformInfrastructure, SignInServicesRepository } from '@slipway/platform-data';
import { ApiException, outboundUrlProblemResolved } from '@slipway/service-kit';
import { GATEWAY_CONFIG, appDatabasesAdminUrl, type GatewayConfig } from '../config.js';
import { SignInServicesService } from './sign-in-services.service.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';
import { parseBody } from '../common/index.js';
import type { OwnedApplication, OwnerPrincipal } from '../owners/index.js';
import { ServiceUsersRepository, type ServiceUserRow, type UserAdminChange } from './service-users.repository.js';
import { BanUserBody, SetUserRoleBody } from './dto/sign-in-user-admin.dto.js';
import { SignInSettingsBody } from './dto/sign-in-settings.dto.js';

interface StoredSettings {
  requireEmailVerification?: boolean;
  socialProviders?: Record<string, { clientId: string; clientSecret: string }>;
  plugins?: Partial<SignInPluginsView>;
  oidcProviders?: Record<string, { issuer: string; clientId: string; clientSecret: string; scopes?: string[] }>;
}

/** The platform's own host names: never an owner's issuer. */
function platformHosts(config: GatewayConfig): string[] {
  return [config.AUTH_PUBLIC_URL, config.PUBLIC_URL].flatMap((u) => {
    try {
      return [new URL(u).hostname];
    } catch {
      return [];
    }
  });
}

/** The stored switches with every plugin named (off when never switched on). */
function pluginsView(stored: Partial<SignInPluginsView> | undefined): SignInPluginsView {
  return Object.fromEntries(
    SIGN_IN_PLUGINS.map((name) => [name, { ...stored?.[name], enabled: stored?.[name]?.enabled === true }]),
  ) as unknown as SignInPluginsView;
}

/** The owners' API's sign-in routes (the dashboard's sign-in tab): the same switch as `/api/v1/auth`, plus users, settings and the outbox. */
@Injectable()
export class OwnerSignInServicesService {
  private readonly keyring: Keyring;

  constructor(
    platform: PlatformInfrastructure,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly signIn: SignInServicesService,
    private readonly repository: ServiceUsersRepository,
    private readonly signInServices: SignInServicesRepository,
    private readonly applications: ApplicationsRepository,
    private readonly outbox: EmailsRepository,
    private readonly tenantChanged: TenantChangedPublisher,
  ) {
    this.keyring = platform.keyring;
  }

  async get(owner: OwnerPrincipal, app: OwnedApplication): Promise<ServerView<SignInInfo>> {
    const { services } = await this.signIn.list({ kind: 'owner', ownerId: owner.id });
    const service = services.find((s) => s.applicationId === app.id) ?? null;
    if (!service) return { enabled: false, service: null };
    const stored = (await this.signInServices.findSettings(app.id))?.settings as StoredSettings | undefined;
    const providers = Object.fromEntries(
      Object.entries(stored?.socialProviders ?? {}).map(([name, p]) => [name, { clientId: p.clientId, callbackUrl: `${service.baseUrl}/callback/${name}` }]),
    );
    const oidcProviders = Object.fromEntries(
      Object.entries(stored?.oidcProviders ?? {}).map(([id, p]) => [
        id,
        { issuer: p.issuer, clientId: p.clientId, callbackUrl: `${service.baseUrl}/callback/${id}` },
      ]),
    );
    return { enabled: true, service: { ...service, socialProviders: providers, plugins: pluginsView(stored?.plugins), oidcProviders } };
  }

  async enable(owner: OwnerPrincipal, app: OwnedApplication): Promise<ServerView<SignInInfo>> {
    await this.signIn.enable({ kind: 'owner', ownerId: owner.id }, app.id);
    return this.get(owner, app);
  }

  async env(owner: OwnerPrincipal, app: OwnedApplication) {
    return { env: await this.signIn.envText({ kind: 'owner', ownerId: owner.id }, app.id) };
  }

  async updateSettings(owner: OwnerPrincipal, app: OwnedApplication, body: unknown): Promise<ServerView<SignInInfo>> {
    const input = parseBody(
      SignInSettingsBody,
      body,
      'Send {"requireEmailVerification", "allowLocalhost", "socialProviders": {"github"|"google": {clientId, clientSecret} | null}, "plugins": {"twoFactor"|"passkey"|"magicLink"|"emailOTP"|"organization"|"admin": {enabled, …}}, "oidcProviders": {"<id>": {issuer, clientId, clientSecret} | null}}.',
    );
    const row = await this.signInServices.findSettings(app.id);
    if (!row) throw notOn();
    const settings: StoredSettings = { ...(row.settings as StoredSettings) };
    if (input.requireEmailVerification !== undefined) settings.requireEmailVerification = input.requireEmailVerification;
    if (input.socialProviders) {
      const providers = { ...(settings.socialProviders ?? {}) };
      for (const [name, value] of Object.entries(input.socialProviders)) {
        if (value === undefined) continue;
        if (value === null) delete providers[name];
        // The client secret is sealed to this application and provider; only the sign-in service opens it.
        else
          providers[name] = {
            clientId: value.clientId,
            clientSecret: encryptEnvelope(this.keyring, value.clientSecret, envelopeBinding.oauthClientSecret(app.id, name)).toString('base64'),
          };
      }
      settings.socialProviders = providers;
    }
    if (input.plugins) {
      const switched = { ...(settings.plugins ?? {}) } as Record<string, object>;
      for (const [name, value] of Object.entries(input.plugins)) if (value !== undefined) switched[name] = { ...switched[name], ...value };
      settings.plugins = switched as Partial<SignInPluginsView>;
    }
    if (input.oidcProviders) {
      const providers = { ...(settings.oidcProviders ?? {}) };
      for (const [id, value] of Object.entries(input.oidcProviders)) {
        if (value === null) {
          delete providers[id];
          continue;
        }
        // The sign-in service's own rule (@slipway/service-kit): https, nothing internal. It checks again at every connection.
        const problem = await outboundUrlProblemResolved(value.issuer, {
          allowPrivate: this.config.AUTH_OIDC_ALLOW_PRIVATE_ISSUERS,
          platformHosts: platformHosts(this.config),
        });
        if (problem) throw new ApiException('bad_request', `oidcProviders.${id}.issuer ${problem}.`);
        providers[id] = {
          issuer: value.issuer,
          clientId: value.clientId,
          clientSecret: encryptEnvelope(this.keyring, value.clientSecret, envelopeBinding.oauthClientSecret(app.id, id)).toString('base64'),
        };
      }
      if (Object.keys(providers).length > 20) throw new ApiException('bad_request', 'At most 20 OpenID Connect providers per application.');
      settings.oidcProviders = providers;
    }
    await this.signInServices.updateSettings(app.id, settings, input.allowLocalhost);
    await this.tenantChanged.publish(app.id);
    return this.get(owner, app);
  }

  async users(app: OwnedApplication, search: unknown): Promise<{ total: number; users: ServerView<SignInUserView>[] }> {
    const query = typeof search === 'string' ? search.trim().slice(0, 200) : '';
    const { users, total } = await this.repository.users(await this.tenantUrl(app), query, 100);
    return { total, users: users.map(userView) };
  }

  /**
   * The owner's user administration (Better Auth's admin plugin's ban, unban, revoke, set-role)
   * on the application's own database, through the SQL the sign-in service uses
   * (@slipway/sign-in-core). A ban ends the user's sessions in the same transaction; the service's
   * session cache drops them on the tables' NOTIFY. Audit rows name the actor `owner:<ownerId>`.
   */
  async administer(
    owner: OwnerPrincipal,
    app: OwnedApplication,
    userId: string,
    action: string,
    body: unknown,
    ip: string,
  ): Promise<{ user: ServerView<SignInUserView> }> {
    const change = adminChange(action, body);
    const row = await this.repository.administer(await this.tenantUrl(app), userId.slice(0, 200), change, { actor: `owner:${owner.id}`, ip });
    if (!row) throw new ApiException('not_found', 'This application has no such user.');
    return { user: userView(row) };
  }

  /** The application's own database, connected as its own role; 404 while sign-in is off. */
  private async tenantUrl(app: OwnedApplication): Promise<string> {
    const database = await this.applications.databases.find(app.id);
    if (!database || !(await this.signInServices.findSettings(app.id))) throw notOn();
    const password = decryptEnvelopeToString(this.keyring, database.password, envelopeBinding.databasePassword(app.id));
    return tenantDatabaseUrl(appDatabasesAdminUrl(this.config), database, password);
  }

  async emails(app: OwnedApplication): Promise<{ emails: ServerView<OutboxEmailView>[] }> {
    return { emails: await this.outbox.latest(app.id, 50) };
  }
}

function userView(u: ServiceUserRow): ServerView<SignInUserView> {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    emailVerified: u.email_verified,
    createdAt: u.created_at,
    role: u.role,
    banned: u.banned,
    banReason: u.ban_reason,
    banExpires: u.ban_expires,
  };
}

function adminChange(action: string, body: unknown): UserAdminChange {
  switch (action) {
    case 'ban': {
      const input = parseBody(BanUserBody, body, 'Send {"banReason"?, "banExpiresIn"?: seconds}.');
      return { kind: 'ban', reason: input.banReason || 'No reason', expiresAt: input.banExpiresIn ? new Date(Date.now() + input.banExpiresIn * 1000) : null };
    }
    case 'unban':
      return { kind: 'unban' };
    case 'revoke-sessions':
      return { kind: 'revoke-sessions' };
    case 'role': {
      const { role } = parseBody(SetUserRoleBody, body, 'Send {"role": "user" | "admin" | ["user", "admin"]}.');
      return { kind: 'set-role', role: Array.isArray(role) ? role.join(',') : role };
    }
    default:
      throw new ApiException('not_found', 'No such action on a user.');
  }
}

function notOn(): ApiException {
  return new ApiException('not_found', 'Sign-in is not on for this application.');
}
