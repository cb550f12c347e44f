import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { ApiPrincipal } from './api-principal.js';
import { ApiKeysService } from './api-key-verifier.service.js';

export const API_KEY_STRATEGY = 'api-key';

/** passport bearer strategy: `Authorization: Bearer slw_key_…` → the key's application. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, API_KEY_STRATEGY) {
  constructor(private readonly keys: ApiKeysService) {
    super();
  }

  validate(token: string): Promise<ApiPrincipal> {
    return this.keys.authenticate(token);
  }
}
