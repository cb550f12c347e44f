import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { migrateServiceAuth, tenantDatabaseUrl } from '@slipway/sign-in-core';
import { redisConnection, tenantChangedChannel } from '@slipway/messaging';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { SignInServicesRepository } from '@slipway/platform-data';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthErrors, throughRestart } from '../common/index.js';
import { KEYRING } from '../platform/index.js';
import { TenantPools } from './tenant-pools.js';
import type { SignInSettings, Tenant, TenantDb } from './tenant.js';

/**
 * Resolves `/a/{slug}` to its tenant. Configuration is cached briefly; a message on
 * `tenantChangedChannel` (application id or slug) drops it on every replica at once.
 */
@Injectable()
export class TenantsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('TenantsService');
  private readonly cache = new Map<string, { tenant: Tenant; until: number }>();
  private readonly loading = new Map<string, Promise<Tenant | null>>();
  private readonly migrated = new Set<string>();
  private subscriber: Redis | undefined;

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly signInServices: SignInServicesRepository,
    private readonly pools: TenantPools,
  ) {}

  async onModuleInit(): Promise<void> {
    const channel = tenantChangedChannel();
    this.subscriber = redisConnection(this.config.REDIS_URL, 'subscriber', { lazyConnect: true });
    this.subscriber.on('error', (error: Error) => this.logger.warn(`tenant change subscription: ${error.message}`));
    this.subscriber.on('message', (_channel: string, message: string) => {
      try {
        this.forget(channel.decode(message).applicationId);
      } catch (error) {
        this.logger.warn(`dropped a message on ${channel.name}: ${(error as Error).message}`);
      }
    });
    // Announcements missed while Redis was away: drop the whole cache once the connection is back.
    this.subscriber.on('ready', () => this.cache.clear());
    try {
      await this.subscriber.connect();
      await this.subscriber.subscribe(channel.name);
    } catch (error) {
      this.logger.warn(`cannot subscribe to tenant changes yet: ${(error as Error).message}`);
      // ioredis re-subscribes on reconnect only to channels it subscribed to; ask again once it is ready.
      this.subscriber.once('ready', () => {
        this.subscriber?.subscribe(channel.name).catch((e: Error) => this.logger.warn(`subscribing to tenant changes failed: ${e.message}`));
      });
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.subscriber?.disconnect();
  }

  /** Drops cached configuration of an application (by id or slug). */
  forget(idOrSlug: string): void {
    for (const [slug, entry] of this.cache) {
      if (slug === idOrSlug || entry.tenant.applicationId === idOrSlug) this.cache.delete(slug);
    }
  }

  async resolve(slug: string): Promise<Tenant> {
    const cached = this.cache.get(slug);
    if (cached && cached.until > Date.now()) return cached.tenant;
    let pending = this.loading.get(slug);
    if (!pending) {
      // Every request resolves its tenant (mostly from the cache): a restarting server is waited out.
      pending = throughRestart(() => this.load(slug), this.config.AUTH_DB_RESTART_WAIT_MS).finally(() => this.loading.delete(slug));
      this.loading.set(slug, pending);
    }
    const tenant = await pending;
    if (!tenant) throw AuthErrors.notFound();
    return tenant;
  }

  /** The tenant's database handle: the one place a TenantDb is made (see its type). */
  db<Id extends string>(tenant: Tenant<Id>): TenantDb<Id> {
    return this.pools.get(tenant) as TenantDb<Id>;
  }

  private async load(slug: string): Promise<Tenant | null> {
    const row = await this.signInServices.findTenantBySlug(slug);
    if (!row?.database || !row.signInService) return null;
    const password = decryptEnvelopeToString(this.keyring, row.database.password, envelopeBinding.databasePassword(row.id));
    const tenant: Tenant = {
      applicationId: row.id,
      slug: row.slug,
      authUrl: `${this.config.AUTH_PUBLIC_URL}/a/${row.slug}`,
      cookieSecret: Buffer.from(decryptEnvelopeToString(this.keyring, row.signInService.cookieSecret, envelopeBinding.cookieSecret(row.id)), 'utf8'),
      trustedOrigins: new Set(row.trustedOrigins.map((o) => o.origin.toLowerCase())),
      allowLocalhost: row.allowLocalhost,
      settings: (row.signInService.settings ?? {}) as SignInSettings,
      databaseUrl: tenantDatabaseUrl(this.config.APP_DATABASES_ADMIN_URL, row.database, password),
    };
    if (!this.migrated.has(tenant.databaseUrl)) {
      // Brings a tenant created by an older release up to this release's service_auth schema.
      await migrateServiceAuth(tenant.databaseUrl);
      this.migrated.add(tenant.databaseUrl);
    }
    if (this.config.AUTH_TENANT_CACHE_SECONDS > 0) this.cache.set(slug, { tenant, until: Date.now() + this.config.AUTH_TENANT_CACHE_SECONDS * 1000 });
    return tenant;
  }
}
