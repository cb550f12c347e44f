import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiException } from '@slipway/server';
import type { Request } from 'express';
import { OwnerSessionsService } from '../owner-auth/owner-sessions.service.js';
import type { DashboardRequest } from './owner-principal.js';
import { readSessionCookie } from './session-cookie.js';

/** Requires a live owner session cookie; sets `request.owner`. */
@Injectable()
export class OwnerSessionGuard implements CanActivate {
  constructor(private readonly sessions: OwnerSessionsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & DashboardRequest>();
    const token = readSessionCookie(request);
    const owner = token ? await this.sessions.resolve(token) : null;
    if (!owner) throw new ApiException('unauthorized', 'Sign in to the dashboard first.');
    request.owner = owner;
    return true;
  }
}
