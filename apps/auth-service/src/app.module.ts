import { Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { HealthModule } from '@slipway/server';
import { NotFoundModule } from './common/not-found.module.js';
import { AuthPipelineMiddleware } from './common/auth-pipeline.middleware.js';
import { PlatformModule } from './common/platform.providers.js';
import { SharedModule } from './common/shared.module.js';
import type { AuthConfig } from './config.js';
import { EmailVerificationModule } from './email-verification/email-verification.module.js';
import { PasswordModule } from './password/password.module.js';
import { SessionsModule } from './sessions/sessions.module.js';
import { SignInModule } from './sign-in/sign-in.module.js';
import { SignUpModule } from './sign-up/sign-up.module.js';
import { SocialModule } from './social/social.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { UsersModule } from './users/users.module.js';

@Module({})
export class AppModule implements NestModule {
  static register(config: AuthConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        HealthModule.forRoot({ service: 'auth-service', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }),
        PlatformModule.register(config),
        SharedModule,
        SignUpModule,
        SignInModule,
        SessionsModule,
        TokensModule,
        PasswordModule,
        EmailVerificationModule,
        UsersModule,
        SocialModule,
        // Last: answers every other path under /a/{slug} in Better Auth's shape.
        NotFoundModule,
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AuthPipelineMiddleware).forRoutes({ path: 'a/*path', method: RequestMethod.ALL });
  }
}
