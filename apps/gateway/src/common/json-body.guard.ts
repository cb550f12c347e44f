import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiException } from '@slipway/service-kit';
import type { Request } from 'express';

/** JSON endpoints refuse other content types with `bad_request` (rather than seeing `{}`). */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) {
      throw new ApiException('bad_request', 'Send a JSON body with Content-Type: application/json.');
    }
    return true;
  }
}
