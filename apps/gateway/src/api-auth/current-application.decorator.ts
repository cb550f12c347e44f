import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { ApiPrincipal } from './api-principal.js';

/** The authenticated application (set by ApiKeyGuard). */
export const CurrentApplication = createParamDecorator((_data: unknown, context: ExecutionContext): ApiPrincipal => {
  return context.switchToHttp().getRequest<{ user: ApiPrincipal }>().user;
});
