import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { DashboardRequest, OwnedApplication, OwnerPrincipal, OwnersApiCaller } from './owner-principal.js';

/** The signed-in owner (set by OwnerSessionGuard or the local sign-in strategy). */
export const CurrentOwner = createParamDecorator((_data: unknown, context: ExecutionContext): OwnerPrincipal => {
  const request = context.switchToHttp().getRequest<DashboardRequest & { user?: OwnerPrincipal }>();
  return (request.owner ?? request.user)!;
});

/** How the caller authenticated (session, personal access token, or a project key and its application). */
export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): OwnersApiCaller => {
  return context.switchToHttp().getRequest<DashboardRequest>().caller!;
});

/** The application named by `:appId`, already checked to belong to the owner. */
export const CurrentApplication = createParamDecorator((_data: unknown, context: ExecutionContext): OwnedApplication => {
  return context.switchToHttp().getRequest<DashboardRequest>().ownedApplication!;
});
