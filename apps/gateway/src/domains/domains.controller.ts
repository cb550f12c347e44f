import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { DomainsService } from './domains.service.js';

@Controller('dashboard/api/applications/:appId/domains')
@OwnedApplicationRoute()
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  @Get()
  list(@CurrentApplication() app: OwnedApplication) {
    return this.domains.list(app.id);
  }

  @Post()
  add(@CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.domains.add(app.id, body);
  }

  /** Looks up the claim's TXT record now; also re-checks a verified domain (it loses verification if the record is gone). */
  @Post(':domainId/verify')
  @HttpCode(200)
  verify(@CurrentApplication() app: OwnedApplication, @Param('domainId') domainId: string) {
    return this.domains.verify(app.id, domainId);
  }

  @Delete(':domainId')
  remove(@CurrentApplication() app: OwnedApplication, @Param('domainId') domainId: string) {
    return this.domains.remove(app.id, domainId);
  }
}
