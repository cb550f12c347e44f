import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeysService, PersonalAccessTokensService, unauthorized } from '../api-auth/index.js';
import type { SignInPrincipal } from './sign-in-principal.js';

/**
 * The sign-in platform calls accept the owner's personal access token (`slw_pat_…`) or a
 * project API key (`slw_key_…`, its own application only). Deliberately a separate guard: the
 * deployment endpoints keep `ApiKeyGuard`, which accepts project API keys only.
 */
@Injectable()
export class OwnerTokenOrApiKeyGuard implements CanActivate {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly tokens: PersonalAccessTokensService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & { signInPrincipal?: SignInPrincipal }>();
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Send the owner token or a project API key: Authorization: Bearer slw_pat_… (or slw_key_…).');
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <token>".');
    const presented = match[1]!;
    request.signInPrincipal = presented.startsWith('slw_key_')
      ? { kind: 'application', applicationId: (await this.apiKeys.authenticate(presented)).applicationId }
      : { kind: 'owner', ownerId: await this.tokens.authenticate(presented) };
    return true;
  }
}
