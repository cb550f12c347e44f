import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ApiException, clientAddress } from '@slipway/service-kit';
import type { Request } from 'express';
import { Strategy } from 'passport-local';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import { OwnerAuthService } from './owner-auth.service.js';

export const OWNER_LOCAL_STRATEGY = 'owner-local';

/** passport-local: `{email, password}` → the owner; the client address feeds the sign-in limits. */
@Injectable()
export class OwnerLocalStrategy extends PassportStrategy(Strategy, OWNER_LOCAL_STRATEGY) {
  constructor(
    private readonly auth: OwnerAuthService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    super({ usernameField: 'email', passwordField: 'password', passReqToCallback: true });
  }

  async validate(request: Request, email: string, password: string) {
    const address = clientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], this.config.GATEWAY_TRUSTED_PROXIES);
    const owner = await this.auth.verify(email, password, address);
    if (!owner) throw new ApiException('unauthorized', 'The email or password is not right.');
    return owner;
  }
}
