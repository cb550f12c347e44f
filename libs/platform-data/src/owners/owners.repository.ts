import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Owners (the platform's users) and their dashboard sessions.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class OwnersRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
