import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule } from '@slipway/server';
import { GATEWAY_CONFIG, type GatewayConfig } from './config.js';

@Module({})
export class AppModule {
  static register(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [HealthModule.forRoot({ service: 'gateway', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL })],
      providers: [{ provide: GATEWAY_CONFIG, useValue: config }],
    };
  }
}
