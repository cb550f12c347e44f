import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiException } from '@slipway/service-kit';
import type { Request } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';

export const CSRF_HEADER = 'x-slipway-csrf';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cookie-authenticated writes must come from the dashboard itself: the Origin header must be the
 * platform's own (PUBLIC_URL) AND the request must carry `X-Slipway-Csrf: 1`, a custom header a
 * cross-site form cannot send and a cross-site fetch cannot send without a CORS preflight we never
 * answer. Either check alone would do in a modern browser; both cover older ones and proxies.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  private readonly origin: string;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.origin = new URL(config.PUBLIC_URL).origin;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (SAFE_METHODS.has(request.method)) return true;
    if (request.headers.origin !== this.origin) {
      throw new ApiException('forbidden', `Changes are accepted only from the dashboard at ${this.origin} (the Origin header did not match).`);
    }
    if (request.headers[CSRF_HEADER] !== '1') {
      throw new ApiException('forbidden', 'Changes must carry the header X-Slipway-Csrf: 1.');
    }
    return true;
  }
}
