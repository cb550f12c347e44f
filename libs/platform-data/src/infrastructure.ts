import { createBlobStore, type BlobStore, type BlobStoreConfig } from '@slipway/blob';
import { keyringFromMasterKey, type Keyring } from '@slipway/crypto';
import { createPrismaClient, type PrismaClient } from '@slipway/platform-schema';
import { redisConnection, type RedisRole } from '@slipway/messaging';
import type { Redis, RedisOptions } from 'ioredis';
import pg from 'pg';

/** What a process's configuration holds of the platform's infrastructure (the variables of ARCHITECTURE.md). */
export interface PlatformSettings extends BlobStoreConfig {
  DATABASE_URL: string;
  REDIS_URL?: string | undefined;
  SLIPWAY_MASTER_KEY?: string | undefined;
}

export interface PlatformWiring {
  /** Connections of the one pg pool (Prisma runs on the same pool). */
  poolSize: number;
  /**
   * The role of this process's Redis client (`redisConnection`, @slipway/messaging), with the
   * options it needs beyond the role's; omitted: no Redis client is made and `redis` throws.
   */
  redis?: { role: RedisRole; overrides?: RedisOptions };
  /** Whether this process reads or writes blobs (artifacts, sources). */
  blobs?: boolean;
}

/**
 * The platform's infrastructure for one process, made the same way in every app, lib and tool:
 * one pg pool with the Prisma client over it, one Redis client, the blob store and the keyring
 * from the master key. Nest apps get it from `PlatformDataModule`; the edge and the CLI call
 * `PlatformInfrastructure.open` themselves. Only `libs/platform-data`'s repositories query the
 * platform database through it.
 */
export class PlatformInfrastructure {
  readonly pool: pg.Pool;
  readonly prisma: PrismaClient;
  private readonly redisClient?: Redis;
  private readonly blobStore?: BlobStore;
  private readonly keyringValue?: Keyring;

  private constructor(settings: PlatformSettings, wiring: PlatformWiring) {
    this.pool = new pg.Pool({ connectionString: settings.DATABASE_URL, max: wiring.poolSize });
    // An idle connection that dies (server restart) must not crash the process; pg reconnects.
    this.pool.on('error', () => undefined);
    this.prisma = createPrismaClient(settings.DATABASE_URL, { pool: this.pool });
    if (wiring.redis) {
      if (!settings.REDIS_URL) throw new Error('REDIS_URL is required by this process');
      this.redisClient = redisConnection(settings.REDIS_URL, wiring.redis.role, wiring.redis.overrides);
      this.redisClient.on('error', () => undefined);
    }
    if (wiring.blobs) this.blobStore = createBlobStore(settings);
    if (settings.SLIPWAY_MASTER_KEY) this.keyringValue = keyringFromMasterKey(settings.SLIPWAY_MASTER_KEY);
  }

  static open(settings: PlatformSettings, wiring: PlatformWiring): PlatformInfrastructure {
    return new PlatformInfrastructure(settings, wiring);
  }

  get redis(): Redis {
    if (!this.redisClient) throw new Error('this process was wired without Redis (PlatformWiring.redis)');
    return this.redisClient;
  }

  get blobs(): BlobStore {
    if (!this.blobStore) throw new Error('this process was wired without blobs (PlatformWiring.blobs)');
    return this.blobStore;
  }

  /** The master keyring (envelopes of secrets, cookie secrets, database passwords). */
  get keyring(): Keyring {
    if (!this.keyringValue) throw new Error('SLIPWAY_MASTER_KEY is not set for this process');
    return this.keyringValue;
  }

  async close(): Promise<void> {
    this.redisClient?.disconnect();
    await this.prisma.$disconnect().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
