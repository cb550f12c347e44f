import { Module, type DynamicModule } from '@nestjs/common';
import { HealthModule } from '@slipway/service-kit';
import type { AuthConfig } from './config.js';
import { AdminModule } from './admin/index.js';
import { EmailOtpModule } from './email-otp/index.js';
import { EmailVerificationModule } from './email-verification/index.js';
import { GenericOAuthModule } from './generic-oauth/index.js';
import { MagicLinkModule } from './magic-link/index.js';
import { OrganizationModule } from './organization/index.js';
import { PasskeyModule } from './passkey/index.js';
import { PasswordModule } from './password/index.js';
import { PipelineModule } from './pipeline/index.js';
import { PlatformModule } from './platform/index.js';
import { RoutingModule } from './routing/index.js';
import { SessionsModule } from './sessions/index.js';
import { SignInModule } from './sign-in/index.js';
import { SignUpModule } from './sign-up/index.js';
import { SocialModule } from './social/index.js';
import { TokensModule } from './tokens/index.js';
import { TwoFactorModule } from './two-factor/index.js';
import { UpdateUserModule } from './update-user/index.js';

/** The sign-in service: infrastructure once (PlatformModule), the request pipeline, every feature; see the README's layout. */
@Module({})
export class AppModule {
  static register(config: AuthConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        HealthModule.forRoot({ service: 'auth-service', postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }),
        PlatformModule.register(config),
        PipelineModule,
        SignUpModule,
        SignInModule,
        SessionsModule,
        TokensModule,
        PasswordModule,
        EmailVerificationModule,
        UpdateUserModule,
        SocialModule,
        MagicLinkModule,
        EmailOtpModule,
        PasskeyModule,
        TwoFactorModule,
        GenericOAuthModule,
        AdminModule,
        OrganizationModule,
        // Last: strict routing, and Better Auth's 404 for every other path under /a/{slug}.
        RoutingModule,
      ],
    };
  }
}
