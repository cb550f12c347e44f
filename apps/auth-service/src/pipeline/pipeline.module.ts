import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { TenantsModule } from '../tenants/index.js';
import { AuthPipelineMiddleware } from './auth-pipeline.middleware.js';
import { RateLimitService } from './rate-limit.service.js';
import { SignInAttempts } from './sign-in-attempts.service.js';

/**
 * What every `/a/{slug}/…` request goes through before its handler: canonical path, tenant,
 * client address, CORS, rate limit, origin and redirect checks (AuthPipelineMiddleware). Applied
 * here to every such route; exported for the session-reads fast path, which runs it on plain
 * Node requests. Also exports SignInAttempts, the per-account and per-address failure limits that
 * sign-in applies once it knows the email, and password reset and change lift.
 */
@Module({ imports: [TenantsModule], providers: [RateLimitService, AuthPipelineMiddleware, SignInAttempts], exports: [AuthPipelineMiddleware, SignInAttempts] })
export class PipelineModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AuthPipelineMiddleware).forRoutes({ path: 'a/*path', method: RequestMethod.ALL });
  }
}
