import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule } from '@slipway/server';
import { AUTH_CONFIG, type AuthConfig } from './config.js';

@Module({})
export class AppModule {
  static register(config: AuthConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [HealthModule.forRoot({ service: 'auth-service', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL })],
      providers: [{ provide: AUTH_CONFIG, useValue: config }],
    };
  }
}
