import { Module } from '@nestjs/common';
import { AuthModule } from '../api-auth/index.js';
import { OwnerTokenOrApiKeyGuard } from './owner-token-or-api-key.guard.js';
import { OwnerAccessModule } from '../owners/index.js';
import { OwnerSignInServicesController } from './owner-sign-in-services.controller.js';
import { ServiceUsersRepository } from './service-users.repository.js';
import { OwnerSignInServicesService } from './owner-sign-in-services.service.js';
import { SignInServicesController } from './sign-in-services.controller.js';
import { SignInServicesService } from './sign-in-services.service.js';
import { TenantChangedPublisher } from './tenant-changed.publisher.js';

/**
 * Sign-in for an application's own users: the platform calls that switch it on (`/api/v1/auth`,
 * personal access token or API key) and the owners' API's routes (the dashboard's tab: users, settings, outbox), over one SignInServicesService.
 */
@Module({
  imports: [AuthModule, OwnerAccessModule],
  controllers: [SignInServicesController, OwnerSignInServicesController],
  providers: [SignInServicesService, OwnerTokenOrApiKeyGuard, TenantChangedPublisher, ServiceUsersRepository, OwnerSignInServicesService],
  exports: [SignInServicesService, TenantChangedPublisher],
})
export class SignInServicesModule {}
