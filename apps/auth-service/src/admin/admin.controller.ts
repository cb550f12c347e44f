import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import type { z } from '@slipway/config';
import { AuthErrorFilter, AuthErrors, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import {
  banBody,
  createUserBody,
  getUserQuery,
  hasPermissionBody,
  listUsersQuery,
  revokeSessionBody,
  setPasswordBody,
  setRoleBody,
  updateUserBody,
  userIdBody,
} from './admin.dto.js';
import { AdminImpersonationService } from './admin-impersonation.service.js';
import { AdminService } from './admin.service.js';

/** A query string validated as better-call does: 400 VALIDATION_ERROR "[query.field] reason". */
function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw AuthErrors.validation(`[query.${issue.path.join('.')}] ${issue.message}`);
}

/** Better Auth's admin plugin routes (`adminClient`), each 404 while the application has the plugin off. */
@Controller('a/:slug/admin')
@UseFilters(AuthErrorFilter)
export class AdminController {
  constructor(
    private readonly admin: AdminService,
    private readonly impersonation: AdminImpersonationService,
  ) {}

  @Get('list-users')
  async listUsers(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.admin.listUsers(req.tenant, requestMeta(req), parseQuery(listUsersQuery, query)));
  }

  @Get('get-user')
  async getUser(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.admin.getUser(req.tenant, requestMeta(req), parseQuery(getUserQuery, query).id));
  }

  @Post('create-user')
  async createUser(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.createUser(req.tenant, requestMeta(req), parseBody(createUserBody, body)));
  }

  @Post('update-user')
  async updateUser(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.updateUser(req.tenant, requestMeta(req), parseBody(updateUserBody, body)));
  }

  @Post('set-role')
  async setRole(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.setRole(req.tenant, requestMeta(req), parseBody(setRoleBody, body)));
  }

  @Post('ban-user')
  async ban(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.ban(req.tenant, requestMeta(req), parseBody(banBody, body)));
  }

  @Post('unban-user')
  async unban(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.unban(req.tenant, requestMeta(req), parseBody(userIdBody, body).userId));
  }

  @Post('list-user-sessions')
  async listUserSessions(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.listUserSessions(req.tenant, requestMeta(req), parseBody(userIdBody, body).userId));
  }

  @Post('revoke-user-session')
  async revokeUserSession(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.revokeUserSession(req.tenant, requestMeta(req), parseBody(revokeSessionBody, body).sessionToken));
  }

  @Post('revoke-user-sessions')
  async revokeUserSessions(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.revokeUserSessions(req.tenant, requestMeta(req), parseBody(userIdBody, body).userId));
  }

  @Post('impersonate-user')
  async impersonate(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.impersonation.impersonate(req.tenant, requestMeta(req), parseBody(userIdBody, body).userId));
  }

  @Post('stop-impersonating')
  async stopImpersonating(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.impersonation.stop(req.tenant, requestMeta(req)));
  }

  @Post('remove-user')
  async removeUser(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.removeUser(req.tenant, requestMeta(req), parseBody(userIdBody, body).userId));
  }

  @Post('set-user-password')
  async setUserPassword(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.setUserPassword(req.tenant, requestMeta(req), parseBody(setPasswordBody, body)));
  }

  @Post('has-permission')
  async hasPermission(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.admin.hasPermission(req.tenant, requestMeta(req), parseBody(hasPermissionBody, body)));
  }
}
