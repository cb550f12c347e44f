import { Module } from '@nestjs/common';
import { OwnerAuthModule } from '../owner-auth/owner-auth.module.js';
import { CsrfGuard } from './csrf.guard.js';
import { OwnedApplicationGuard } from './owned-application.guard.js';
import { OwnerSessionGuard } from './owner-session.guard.js';

/** What every dashboard feature needs to check who is asking and which application they mean. */
@Module({
  imports: [OwnerAuthModule],
  providers: [CsrfGuard, OwnerSessionGuard, OwnedApplicationGuard],
  exports: [OwnerAuthModule, CsrfGuard, OwnerSessionGuard, OwnedApplicationGuard],
})
export class DashboardAccessModule {}
