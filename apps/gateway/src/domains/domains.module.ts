import { Module } from '@nestjs/common';
import { SignInServicesModule } from '../sign-in-services/index.js';
import { OwnerAccessModule } from '../owners/index.js';
import { DomainRecheckService } from './domain-recheck.service.js';
import { DomainVerifier } from './domain-verifier.js';
import { DomainsController } from './domains.controller.js';
import { DomainsService } from './domains.service.js';

@Module({
  imports: [OwnerAccessModule, SignInServicesModule],
  controllers: [DomainsController],
  providers: [DomainsService, DomainVerifier, DomainRecheckService],
})
export class DomainsModule {}
