import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * API keys and personal access tokens: one lifecycle (list, create, rename, rotate, revoke, last used).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
