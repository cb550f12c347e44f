import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformDataModule } from '@slipway/platform-data';
import { HealthModule } from '@slipway/service-kit';
import { WORKER_CONFIG, type WorkerConfig } from './config.js';
import { DeployModule } from './deploy/deploy.module.js';

@Module({})
export class AppModule {
  /** `consume: false` serves health only (no queue consumer, no reconciler). */
  static register(config: WorkerConfig, options: { consume?: boolean } = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformDataModule.register(config, { poolSize: 4, blobs: true, redis: { role: 'queue-worker' } }),
        HealthModule.forRoot({ service: 'build-worker', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }),
        ...(options.consume === false ? [] : [DeployModule.register(config)]),
      ],
      providers: [{ provide: WORKER_CONFIG, useValue: config }],
    };
  }
}
