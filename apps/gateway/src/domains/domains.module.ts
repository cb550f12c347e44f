import { Module } from '@nestjs/common';
import { SignInModule } from '../sign-in-services/sign-in.module.js';
import { DashboardAccessModule } from '../owners/access/dashboard-access.module.js';
import { DomainRecheckService } from './domain-recheck.service.js';
import { DomainVerifier } from './domain-verifier.js';
import { DomainsController } from './domains.controller.js';
import { DomainsService } from './domains.service.js';

@Module({ imports: [DashboardAccessModule, SignInModule], controllers: [DomainsController], providers: [DomainsService, DomainVerifier, DomainRecheckService] })
export class DomainsModule {}
