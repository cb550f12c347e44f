import { Global, Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { keyringFromMasterKey } from '@slipway/crypto';
import { createPrismaClient, type PrismaClient } from '@slipway/db';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';

export const PLATFORM_PRISMA = Symbol('PLATFORM_PRISMA');
export const KEYRING = Symbol('KEYRING');
export const REDIS = Symbol('REDIS');

/** Closes the shared clients when the app shuts down. */
@Injectable()
class SharedClientsCloser implements OnModuleDestroy {
  constructor(
    @Inject(PLATFORM_PRISMA) private readonly prisma: PrismaClient,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}
  async onModuleDestroy(): Promise<void> {
    this.redis.disconnect();
    await this.prisma.$disconnect();
  }
}

/**
 * The service's infrastructure: its configuration (AUTH_CONFIG), the platform database
 * (PLATFORM_PRISMA), Redis (REDIS) and the master keyring (KEYRING), each made once here.
 * Registered once by AppModule and global, like configuration: a feature injects these tokens
 * and imports the modules of the features it uses. It is the only global module and holds no
 * feature's class.
 */
@Global()
@Module({})
export class PlatformModule {
  static register(config: AuthConfig) {
    const providers = [
      { provide: AUTH_CONFIG, useValue: config },
      { provide: PLATFORM_PRISMA, useFactory: () => createPrismaClient(config.DATABASE_URL, { max: 5 }) },
      { provide: KEYRING, useFactory: () => keyringFromMasterKey(config.SLIPWAY_MASTER_KEY) },
      {
        provide: REDIS,
        useFactory: () => {
          const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
          redis.on('error', () => undefined);
          return redis;
        },
      },
    ];
    return { module: PlatformModule, global: true, providers: [...providers, SharedClientsCloser], exports: providers.map((p) => p.provide) };
  }
}
