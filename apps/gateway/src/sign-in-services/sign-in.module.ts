import { Module } from '@nestjs/common';
import { AuthModule } from '../api-auth/index.js';
import { SignInTokenGuard } from './sign-in-token.guard.js';
import { DashboardAccessModule } from '../owners/index.js';
import { DashboardSignInController } from './dashboard-sign-in.controller.js';
import { DashboardSignInRepository } from './dashboard-sign-in.repository.js';
import { DashboardSignInService } from './dashboard-sign-in.service.js';
import { SignInController } from './sign-in.controller.js';
import { SignInService } from './sign-in.service.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';

/**
 * Sign-in for an application's own users: the platform calls that switch it on (`/api/v1/auth`,
 * personal access token or API key) and the dashboard's tab (users, settings, outbox), over one SignInService.
 */
@Module({
  imports: [AuthModule, DashboardAccessModule],
  controllers: [SignInController, DashboardSignInController],
  providers: [SignInService, SignInTokenGuard, TenantChangedPublisher, DashboardSignInRepository, DashboardSignInService],
  exports: [SignInService, TenantChangedPublisher],
})
export class SignInModule {}
