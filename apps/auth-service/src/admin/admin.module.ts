import { Module } from '@nestjs/common';
import { PasswordModule } from '../password/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { UsersModule } from '../users/index.js';
import { AdminImpersonationService } from './admin-impersonation.service.js';
import { AdminController } from './admin.controller.js';
import { AdminRepository } from './admin.repository.js';
import { AdminService } from './admin.service.js';

/** Better Auth's admin plugin: user administration, bans, impersonation, the audit trail. */
@Module({
  imports: [TenantsModule, UsersModule, SessionsModule, PasswordModule],
  controllers: [AdminController],
  providers: [AdminRepository, AdminService, AdminImpersonationService],
})
export class AdminModule {}
