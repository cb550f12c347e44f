import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { OwnersRepository } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { Request } from 'express';
import { ApiKeysService, PersonalAccessTokensService, unauthorized } from '../../api-auth/index.js';
import { OwnerSessionsService } from '../accounts/owner-sessions.service.js';
import { CsrfGuard } from './csrf.guard.js';
import { OWNERS_API_ACCESS, type OwnersApiAccess } from './owners-api-access.js';
import type { DashboardRequest, OwnerPrincipal, OwnersApiCaller } from './owner-principal.js';
import { readSessionCookie } from './session-cookie.js';

const DEFAULT_ACCESS: OwnersApiAccess = { bearer: false, projectKeys: 'refused' };

/**
 * Who is calling the owners' API; sets `request.owner` and `request.caller`.
 *
 * Without an Authorization header: the dashboard session cookie, and writes must pass the CSRF
 * checks (a browser sends the cookie on its own). With one: `Bearer slw_pat_…` (the owner's
 * personal access token) or `Bearer slw_key_…` (a project API key, acting for its application's
 * owner) and the cookie is ignored — no CSRF check, as no browser attaches that header to a
 * cross-site request without a CORS preflight this gateway never answers.
 */
@Injectable()
export class OwnerSessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly csrf: CsrfGuard,
    private readonly sessions: OwnerSessionsService,
    private readonly apiKeys: ApiKeysService,
    private readonly tokens: PersonalAccessTokensService,
    private readonly owners: OwnersRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<OwnersApiAccess>(OWNERS_API_ACCESS, [context.getHandler(), context.getClass()]) ?? DEFAULT_ACCESS;
    const request = context.switchToHttp().getRequest<Request & DashboardRequest>();
    const header = request.headers.authorization;
    if (header === undefined) {
      this.csrf.canActivate(context);
      request.owner = await this.fromSession(request);
      request.caller = { kind: 'session' };
      return true;
    }
    if (!access.bearer) throw new ApiException('forbidden', 'This route is for the dashboard session only; tokens and project API keys cannot call it.');
    const [owner, caller] = await this.fromBearer(header);
    // Not about one application: a project key has no business here (application routes decide after their 404).
    if (caller.kind === 'project-key' && !request.params['appId'] && access.projectKeys === 'refused') {
      throw new ApiException('forbidden', "A project API key reaches only its own application's routes; use a personal access token or the dashboard.");
    }
    request.owner = owner;
    request.caller = caller;
    return true;
  }

  private async fromSession(request: Request): Promise<OwnerPrincipal> {
    const token = readSessionCookie(request);
    const owner = token ? await this.sessions.resolve(token) : null;
    if (!owner)
      throw new ApiException('unauthorized', 'Sign in to the dashboard first, or send Authorization: Bearer <personal access token or project API key>.');
    return owner;
  }

  private async fromBearer(header: string): Promise<[OwnerPrincipal, OwnersApiCaller]> {
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <personal access token or project API key>".');
    const presented = match[1]!;
    if (presented.startsWith('slw_key_')) {
      const { applicationId } = await this.apiKeys.authenticate(presented);
      const owner = await this.owners.findByApplication(applicationId);
      if (!owner) throw unauthorized('The API key is not valid.');
      return [
        { ...owner, sessionId: null },
        { kind: 'project-key', applicationId },
      ];
    }
    const ownerId = await this.tokens.authenticate(presented);
    const owner = await this.owners.findById(ownerId);
    if (!owner) throw unauthorized('The token is not valid.');
    return [{ ...owner, sessionId: null }, { kind: 'token' }];
  }
}
