import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiException } from '@slipway/server';
import type { ApplicationId } from '@slipway/platform-data';
import { ApiKeysService } from '../credentials/api-key-verifier.service.js';
import { CsrfGuard } from '../dashboard/common/csrf.guard.js';
import { OwnedApplicationGuard } from '../dashboard/common/owned-application.guard.js';
import type { DashboardRequest } from '../dashboard/common/owner-principal.js';
import { OwnerSessionGuard } from '../dashboard/common/owner-session.guard.js';

/**
 * Stop-gap until the owners' API guards take bearer credentials (issue 30, branch
 * h30-owners-api: OwnedApplicationRoute then accepts a session, a personal access token or a
 * project API key, and replaces this guard): the dashboard session as OwnedApplicationRoute
 * checks it, or `Authorization: Bearer slw_key_…` — a project API key, for its own application
 * only (any other answers 404, exactly like one that does not exist).
 */
@Injectable()
export class LogsAccessGuard implements CanActivate {
  constructor(
    private readonly csrf: CsrfGuard,
    private readonly session: OwnerSessionGuard,
    private readonly owned: OwnedApplicationGuard,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & DashboardRequest>();
    const header = request.headers.authorization;
    if (header === undefined) return this.csrf.canActivate(context) && (await this.session.canActivate(context)) && (await this.owned.canActivate(context));
    const principal = await this.apiKeys.authenticate(header.replace(/^Bearer\s+/i, ''));
    if (principal.applicationId !== String(request.params['appId'] ?? '').toLowerCase()) throw new ApiException('not_found', 'No such application.');
    request.ownedApplication = { id: principal.applicationId as ApplicationId, name: '', slug: '' };
    return true;
  }
}
