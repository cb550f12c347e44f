import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { DashboardSiteMiddleware } from './dashboard-site.middleware.js';

/** The built dashboard (static files + SPA fallback) at `/`. */
@Module({ providers: [DashboardSiteMiddleware] })
export class DashboardSiteModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DashboardSiteMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.GET }, { path: '{*path}', method: RequestMethod.HEAD });
  }
}
