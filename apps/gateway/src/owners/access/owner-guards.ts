import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { OwnedApplicationGuard } from './owned-application.guard.js';
import { OwnerSessionGuard } from './owner-session.guard.js';
import { OWNERS_API_ACCESS, type OwnersApiAccess } from './owners-api-access.js';

const access = (value: OwnersApiAccess) => SetMetadata(OWNERS_API_ACCESS, value);

/**
 * Any of the owner's credentials: session cookie (CSRF-checked writes) or a personal access
 * token; project API keys are refused (403) unless `projectKeys: 'own-application'`.
 */
export const OwnerRoute = (options: Partial<OwnersApiAccess> = {}) =>
  applyDecorators(access({ bearer: true, projectKeys: 'refused', ...options }), UseGuards(OwnerSessionGuard));

/**
 * As OwnerRoute, and `:appId` must be one of the owner's applications — for a project API key,
 * its own application (any other answers 404, exactly like one that does not exist).
 */
export const OwnedApplicationRoute = (options: Partial<OwnersApiAccess> = {}) =>
  applyDecorators(access({ bearer: true, projectKeys: 'own-application', ...options }), UseGuards(OwnerSessionGuard, OwnedApplicationGuard));

/** The dashboard session only (CSRF-checked writes): no bearer credential may call it. */
export const SessionRoute = () => applyDecorators(access({ bearer: false, projectKeys: 'refused' }), UseGuards(OwnerSessionGuard));
