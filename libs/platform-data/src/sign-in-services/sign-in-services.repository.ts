import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Applications' sign-in services (cookie secret, settings).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class SignInServicesRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
