import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, type Type } from '@nestjs/common';
import { CurrentApplication, CurrentOwner, OwnedApplicationRoute, SessionRoute } from '../owners/index.js';
import type { CredentialLifecycle } from './credential-lifecycle.js';

export const API_KEY_LIFECYCLE = Symbol('API_KEY_LIFECYCLE');
export const TOKEN_LIFECYCLE = Symbol('TOKEN_LIFECYCLE');

/**
 * The dashboard's five credential routes (list, create, rename, rotate, revoke) for one kind:
 * `path` and `route` (guards) say where and for whom, `scope` which principal's id scopes every query.
 */
function credentialsController(path: string, route: () => ClassDecorator, scope: () => ParameterDecorator, lifecycle: symbol): Type {
  @Controller(path)
  @route()
  class CredentialsController {
    constructor(@Inject(lifecycle) private readonly credentials: CredentialLifecycle) {}

    @Get()
    list(@scope() owner: { id: string }) {
      return this.credentials.list(owner.id);
    }

    @Post()
    create(@scope() owner: { id: string }, @Body() body: unknown) {
      return this.credentials.create(owner.id, body);
    }

    @Patch(':id')
    rename(@scope() owner: { id: string }, @Param('id') id: string, @Body() body: unknown) {
      return this.credentials.rename(owner.id, id, body);
    }

    @Post(':id/rotate')
    rotate(@scope() owner: { id: string }, @Param('id') id: string) {
      return this.credentials.rotate(owner.id, id);
    }

    @Delete(':id')
    revoke(@scope() owner: { id: string }, @Param('id') id: string) {
      return this.credentials.revoke(owner.id, id);
    }
  }
  return CredentialsController;
}

/**
 * Project API keys of one of the owner's applications: the session or a personal access token,
 * never a project key (a leaked key must not mint keys that outlive its revocation).
 */
export const ApiKeysController = credentialsController(
  'dashboard/api/applications/:appId/api-keys',
  () => OwnedApplicationRoute({ projectKeys: 'refused' }),
  CurrentApplication,
  API_KEY_LIFECYCLE,
);
/** The owner's personal access tokens: the dashboard session only (a token must not mint tokens that outlive its expiry). */
export const TokensController = credentialsController('dashboard/api/tokens', SessionRoute, CurrentOwner, TOKEN_LIFECYCLE);
