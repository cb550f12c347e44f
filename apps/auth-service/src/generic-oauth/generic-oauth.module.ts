import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/index.js';
import { SocialModule } from '../social/index.js';
import { GenericOAuthController } from './generic-oauth.controller.js';
import { GenericOAuthService } from './generic-oauth.service.js';
import { OidcDiscovery } from './oidc-discovery.js';

@Module({ imports: [SocialModule, SessionsModule], controllers: [GenericOAuthController], providers: [GenericOAuthService, OidcDiscovery] })
export class GenericOAuthModule {}
