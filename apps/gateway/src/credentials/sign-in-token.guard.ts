import { Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { digestsEqual, parseToken } from '@slipway/crypto';
import { CredentialsRepository } from '@slipway/platform-data';
import type { Request } from 'express';
import { ApiKeysService, unauthorized } from './api-key-verifier.service.js';
import type { SignInPrincipal } from '../sign-in/sign-in-principal.js';

const TOUCH_INTERVAL_MS = 60_000;

/**
 * The sign-in platform calls accept the owner's personal access token (`slw_pat_…`) or a
 * project API key (`slw_key_…`, its own application only). Deliberately a separate guard: the
 * deployment endpoints keep `ApiKeyGuard`, which accepts project API keys only.
 */
@Injectable()
export class SignInTokenGuard implements CanActivate {
  private readonly logger = new Logger('SignInToken');

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly credentials: CredentialsRepository,
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
      : { kind: 'owner', ownerId: await this.authenticateOwner(presented) };
    return true;
  }

  private async authenticateOwner(presented: string): Promise<string> {
    const parsed = parseToken('personal_access_token', presented);
    if (!parsed) throw unauthorized('The token is malformed; owner tokens look like slw_pat_…, project API keys like slw_key_….');
    const token = await this.credentials.findPersonalAccessTokenByPrefix(parsed.prefix);
    const matches = digestsEqual(parsed.hash, token?.tokenHash ?? '0'.repeat(64)) && token !== null;
    if (!token || !matches) throw unauthorized('The token is not valid.');
    if (token.revokedAt) throw unauthorized('The token has been revoked.');
    const now = new Date();
    if (token.expiresAt && token.expiresAt <= now) throw unauthorized('The token has expired.');
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      void this.credentials.personalAccessTokens.touchLastUsed([token.id]).catch((error: unknown) => this.logger.warn(`could not record use of token ${token.id}: ${(error as Error).message}`));
    }
    return token.ownerId;
  }
}
