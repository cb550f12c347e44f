import { Module } from '@nestjs/common';
import { SignInModule } from '../sign-in/sign-in.module.js';
import { DashboardAccessModule } from '../dashboard/common/dashboard-access.module.js';
import { DomainRecheckService } from './domain-recheck.service.js';
import { DomainVerifier } from './domain-verifier.js';
import { DomainsController } from './domains.controller.js';
import { DomainsService } from './domains.service.js';

@Module({ imports: [DashboardAccessModule, SignInModule], controllers: [DomainsController], providers: [DomainsService, DomainVerifier, DomainRecheckService] })
export class DomainsModule {}
