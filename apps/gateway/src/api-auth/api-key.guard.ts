import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { API_KEY_STRATEGY } from './api-key.strategy.js';
import { unauthorized } from './api-key-verifier.service.js';

/**
 * Requires a project API key in the Authorization header. Keys in the query string or body
 * (which the bearer strategy would also read) are refused: they end up in logs and histories.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  override canActivate(context: ExecutionContext) {
    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Send a project API key: Authorization: Bearer slw_key_….');
    if (!/^Bearer [^\s]+$/.test(header)) throw unauthorized('The Authorization header must be "Bearer <project API key>".');
    return super.canActivate(context);
  }

  override handleRequest<T>(error: unknown, principal: T | false): T {
    if (error) throw error;
    if (!principal) throw unauthorized('The API key is not valid.');
    return principal;
  }
}
