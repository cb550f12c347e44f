import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule } from '@slipway/server';
import { WORKER_CONFIG, type WorkerConfig } from './config.js';

@Module({})
export class AppModule {
  static register(config: WorkerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [HealthModule.forRoot({ service: 'build-worker', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL })],
      providers: [{ provide: WORKER_CONFIG, useValue: config }],
    };
  }
}
