import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Applications' secrets, stored as envelopes under the master keyring.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class SecretsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
