import { Module } from '@nestjs/common';
import { AuthModule } from '../../api-auth/index.js';
import { OwnerAuthModule } from '../accounts/owner-auth.module.js';
import { CsrfGuard } from './csrf.guard.js';
import { OwnedApplicationGuard } from './owned-application.guard.js';
import { OwnerSessionGuard } from './owner-session.guard.js';

/**
 * What every owners'-API feature needs to check who is asking (session, personal access token
 * or project API key) and which application they mean.
 */
@Module({
  imports: [OwnerAuthModule, AuthModule],
  providers: [CsrfGuard, OwnerSessionGuard, OwnedApplicationGuard],
  exports: [OwnerAuthModule, AuthModule, CsrfGuard, OwnerSessionGuard, OwnedApplicationGuard],
})
export class OwnerAccessModule {}
