import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { VerificationsModule } from '../verifications/index.js';
import { OAuthProviderSources } from './oauth-provider.js';
import { SocialController } from './social.controller.js';
import { SocialService } from './social.service.js';

@Module({
  imports: [TenantsModule, UsersModule, VerificationsModule, SessionsModule],
  controllers: [SocialController],
  providers: [SocialService, OAuthProviderSources],
  exports: [SocialService, OAuthProviderSources],
})
export class SocialModule {}
