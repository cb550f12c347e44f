import { Module, type DynamicModule } from '@nestjs/common';
import { DependencyProbe, type HealthOptions } from './dependency.probe.js';
import { HealthController } from './health.controller.js';

/** `GET /health/live` and `GET /health/ready` (Postgres and Redis), for every app. */
@Module({})
export class HealthModule {
  static forRoot(options: HealthOptions): DynamicModule {
    return {
      module: HealthModule,
      // Global: a service's own endpoints may report what its probe sees (the gateway's dashboard API).
      global: true,
      controllers: [HealthController],
      providers: [{ provide: DependencyProbe, useFactory: () => new DependencyProbe(options) }],
      exports: [DependencyProbe],
    };
  }
}
