import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ApiException } from '@slipway/server';
import { Strategy } from 'passport-local';
import { OwnerAuthService } from './owner-auth.service.js';

export const OWNER_LOCAL_STRATEGY = 'owner-local';

/** passport-local: `{email, password}` → the owner. */
@Injectable()
export class OwnerLocalStrategy extends PassportStrategy(Strategy, OWNER_LOCAL_STRATEGY) {
  constructor(private readonly auth: OwnerAuthService) {
    super({ usernameField: 'email', passwordField: 'password' });
  }

  async validate(email: string, password: string) {
    const owner = await this.auth.verify(email, password);
    if (!owner) throw new ApiException('unauthorized', 'The email or password is not right.');
    return owner;
  }
}
