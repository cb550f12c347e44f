import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApplicationsRepository } from '@slipway/platform-data';
import { ApiException } from '@slipway/server';
import type { Request } from 'express';
import { isUuid } from '../../common/ids.js';
import type { DashboardRequest } from './owner-principal.js';

/**
 * Resolves `:appId` among the signed-in owner's applications (runs after OwnerSessionGuard).
 * Another owner's application answers exactly like one that does not exist: 404.
 */
@Injectable()
export class OwnedApplicationGuard implements CanActivate {
  constructor(private readonly applications: ApplicationsRepository) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & DashboardRequest>();
    const appId = String(request.params['appId'] ?? '');
    const app = isUuid(appId) && request.owner ? await this.applications.findOwned(request.owner.id, appId) : null;
    if (!app) throw new ApiException('not_found', 'No such application.');
    request.ownedApplication = app;
    return true;
  }
}
