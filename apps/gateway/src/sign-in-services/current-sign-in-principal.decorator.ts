import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { SignInPrincipal } from './sign-in-principal.js';

/** The caller authenticated by OwnerTokenOrApiKeyGuard. */
export const CurrentSignInPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): SignInPrincipal => {
  return context.switchToHttp().getRequest<{ signInPrincipal: SignInPrincipal }>().signInPrincipal;
});
