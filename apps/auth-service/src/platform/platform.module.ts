import { Global, Module } from '@nestjs/common';
import { processShare } from '@slipway/config';
import { PlatformDataModule, PlatformInfrastructure } from '@slipway/platform-data';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';

export const KEYRING = Symbol('KEYRING');
export const REDIS = Symbol('REDIS');
/** The platform database's connections of the service (processes on the launcher's socket divide them). */
const AUTH_PLATFORM_PG_CONNECTIONS = 5;

/**
 * The service's infrastructure: its configuration (AUTH_CONFIG), and — from PlatformDataModule,
 * made once per process — the platform database's repositories, Redis (REDIS) and the master
 * keyring (KEYRING).
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
      { provide: KEYRING, useFactory: (platform: PlatformInfrastructure) => platform.keyring, inject: [PlatformInfrastructure] },
      { provide: REDIS, useFactory: (platform: PlatformInfrastructure) => platform.redis, inject: [PlatformInfrastructure] },
    ];
    return {
      module: PlatformModule,
      global: true,
      imports: [
        PlatformDataModule.register(config, {
          poolSize: processShare(AUTH_PLATFORM_PG_CONNECTIONS, config.SLIPWAY_SERVICE_PROCESSES, 2),
          redis: { role: 'command', overrides: { lazyConnect: false, connectTimeout: 10_000 } },
        }),
      ],
      providers,
      exports: providers.map((p) => p.provide),
    };
  }
}
