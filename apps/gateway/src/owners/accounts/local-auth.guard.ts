import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiException } from '@slipway/service-kit';
import type { Request } from 'express';
import { OWNER_LOCAL_STRATEGY } from './local.strategy.js';

@Injectable()
export class LocalAuthGuard extends AuthGuard(OWNER_LOCAL_STRATEGY) {
  override canActivate(context: ExecutionContext) {
    const body = context.switchToHttp().getRequest<Request>().body as Record<string, unknown> | undefined;
    if (typeof body?.['email'] !== 'string' || typeof body['password'] !== 'string') {
      throw new ApiException('bad_request', 'Send {"email", "password"}.');
    }
    return super.canActivate(context);
  }

  override handleRequest<T>(error: unknown, owner: T | false): T {
    if (error) throw error;
    if (!owner) throw new ApiException('unauthorized', 'The email or password is not right.');
    return owner;
  }
}
