import { Module } from '@nestjs/common';
import { MailModule } from '../mail/index.js';
import { SessionsModule } from '../sessions/index.js';
import { TenantsModule } from '../tenants/index.js';
import { InvitationsService } from './invitations.service.js';
import { MembersService } from './members.service.js';
import { OrganizationController } from './organization.controller.js';
import { OrganizationRepository } from './organization.repository.js';
import { OrganizationService } from './organization.service.js';

/** Better Auth's organization plugin: organizations, members, invitations, roles, the active organization. */
@Module({
  imports: [TenantsModule, SessionsModule, MailModule],
  controllers: [OrganizationController],
  providers: [OrganizationRepository, OrganizationService, MembersService, InvitationsService],
})
export class OrganizationModule {}
