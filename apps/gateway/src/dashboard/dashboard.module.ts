import { Module } from '@nestjs/common';
import { OwnerAuthModule } from './owner-auth/owner-auth.module.js';
import { PlatformStatusModule } from './platform-status/platform-status.module.js';

/**
 * The dashboard's own part of /dashboard/api: owner accounts (sign-up, sign-in, session) and the
 * platform's status banner. Every resource's dashboard routes live with that resource
 * (applications/, credentials/, deployments/, domains/, secrets/, sign-in/), guarded by common/.
 */
@Module({ imports: [OwnerAuthModule, PlatformStatusModule] })
export class DashboardModule {}
