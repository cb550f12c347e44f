import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule } from '@slipway/server';
import { EDGE_CONFIG, type EdgeConfig } from './config.js';

@Module({})
export class AppModule {
  static register(config: EdgeConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [HealthModule.forRoot({ service: 'edge', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL })],
      providers: [{ provide: EDGE_CONFIG, useValue: config }],
    };
  }
}
