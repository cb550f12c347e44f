import { Injectable } from '@nestjs/common';
import { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Deployments (the tasks the worker runs) and the releases they produce.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class DeploymentsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}
}
