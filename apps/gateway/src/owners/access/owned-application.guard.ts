import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApplicationsRepository } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { Request } from 'express';
import { isUuid } from '../../common/index.js';
import { OWNERS_API_ACCESS, type OwnersApiAccess } from './owners-api-access.js';
import type { DashboardRequest } from './owner-principal.js';

/**
 * Resolves `:appId` among the calling owner's applications (runs after OwnerSessionGuard).
 * Another owner's application answers exactly like one that does not exist: 404 — and so does,
 * for a project API key, any application but its own. A project key on its own application is
 * refused (403) only where the route says project keys may not call it (managing API keys).
 */
@Injectable()
export class OwnedApplicationGuard implements CanActivate {
  constructor(
    private readonly applications: ApplicationsRepository,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & DashboardRequest>();
    const appId = String(request.params['appId'] ?? '');
    const caller = request.caller;
    const reachable = isUuid(appId) && request.owner && caller && (caller.kind !== 'project-key' || caller.applicationId === appId.toLowerCase());
    const app = reachable ? await this.applications.findOwned(request.owner!.id, appId) : null;
    if (!app) throw new ApiException('not_found', 'No such application.');
    const access = this.reflector.getAllAndOverride<OwnersApiAccess | undefined>(OWNERS_API_ACCESS, [context.getHandler(), context.getClass()]);
    if (caller!.kind === 'project-key' && access?.projectKeys !== 'own-application') {
      throw new ApiException(
        'forbidden',
        "A project API key cannot call this route (it manages the application's credentials); use a personal access token or the dashboard.",
      );
    }
    request.ownedApplication = app;
    return true;
  }
}
