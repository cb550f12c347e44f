import { Inject, Injectable } from '@nestjs/common';
import { LIMITS, type DatabaseInfo, type ServerView } from '@slipway/contract';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { ApplicationsRepository, PlatformInfrastructure } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import type { OwnedApplication, OwnerPrincipal } from '../owners/index.js';

/** The application's own Postgres database: name, usage, and its connection string on request. */
@Injectable()
export class DatabaseService {
  private readonly keyring: Keyring;

  constructor(
    platform: PlatformInfrastructure,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly applications: ApplicationsRepository,
  ) {
    this.keyring = platform.keyring;
  }

  async get(owner: OwnerPrincipal, app: OwnedApplication): Promise<ServerView<DatabaseInfo>> {
    const [row, used] = await Promise.all([this.applications.databases.find(app.id), this.applications.databases.countForOwner(owner.id)]);
    const allowance = { plan: owner.plan, used, allowed: LIMITS.databasesPerPlan[owner.plan] };
    if (!row) return { database: null, allowance };
    return {
      database: { name: row.databaseName, createdAt: row.createdAt, sizeBytes: await this.applications.databases.sizeBytes(row.databaseName) },
      allowance,
    };
  }

  /**
   * The role's password is decrypted only here, on an explicit request; the database lives on the
   * platform's Postgres server, so the host is the one in DATABASE_URL.
   */
  async connectionString(app: OwnedApplication) {
    const row = await this.applications.databases.find(app.id);
    if (!row) throw new ApiException('not_found', 'This application has no database yet; switching sign-in on creates one.');
    const password = decryptEnvelopeToString(this.keyring, row.password, envelopeBinding.databasePassword(app.id));
    const url = new URL(this.config.DATABASE_URL);
    url.username = row.roleName;
    url.password = password;
    url.pathname = `/${encodeURIComponent(row.databaseName)}`;
    url.search = '';
    return { connectionString: url.toString() };
  }
}
