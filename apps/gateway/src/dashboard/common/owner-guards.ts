import { applyDecorators, UseGuards } from '@nestjs/common';
import { CsrfGuard } from './csrf.guard.js';
import { OwnedApplicationGuard } from './owned-application.guard.js';
import { OwnerSessionGuard } from './owner-session.guard.js';

/** Signed-in owner, CSRF-checked writes. */
export const OwnerRoute = () => applyDecorators(UseGuards(CsrfGuard, OwnerSessionGuard));

/** As OwnerRoute, and `:appId` must be one of the owner's applications. */
export const OwnedApplicationRoute = () => applyDecorators(UseGuards(CsrfGuard, OwnerSessionGuard, OwnedApplicationGuard));
