import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyStrategy } from './api-key.strategy.js';
import { ApiKeysService } from './api-key-verifier.service.js';
import { PersonalAccessTokensService } from './personal-access-tokens.service.js';

@Module({
  imports: [PassportModule],
  providers: [ApiKeysService, PersonalAccessTokensService, ApiKeyStrategy, ApiKeyGuard],
  exports: [ApiKeyGuard, ApiKeysService, PersonalAccessTokensService],
})
export class AuthModule {}
