import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Applications, with their custom domains, trusted origins and application databases.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class ApplicationsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
