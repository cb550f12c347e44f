import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Emails the sign-in service sends (the outbox the local mail viewer reads).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class EmailsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
