import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { requirePlugin } from '../tenants/index.js';
import * as dto from './dto/organization.dto.js';
import { InvitationsService } from './invitations.service.js';
import { MembersService } from './members.service.js';
import { OrganizationService } from './organization.service.js';

/** Every organization route is an unknown path (404) while the application has the plugin off: checked before the body. */
class OrganizationPluginOn implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    requirePlugin(context.switchToHttp().getRequest<AuthRequest>().tenant, 'organization');
    return true;
  }
}

/** Better Auth's organization plugin routes, as `organizationClient` calls them. */
@Controller('a/:slug/organization')
@UseFilters(AuthErrorFilter)
@UseGuards(OrganizationPluginOn)
export class OrganizationController {
  constructor(
    private readonly organizations: OrganizationService,
    private readonly members: MembersService,
    private readonly invitations: InvitationsService,
  ) {}

  @Post('create')
  async create(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.create(req.tenant, requestMeta(req), parseBody(dto.createOrganizationBody, body)));
  }

  @Post('update')
  async update(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.update(req.tenant, requestMeta(req), parseBody(dto.updateOrganizationBody, body)));
  }

  @Post('delete')
  async delete(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.delete(req.tenant, requestMeta(req), parseBody(dto.organizationIdBody, body).organizationId));
  }

  @Get('list')
  async list(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.organizations.list(req.tenant, requestMeta(req)));
  }

  @Get('get-full-organization')
  async getFull(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.organizations.getFull(req.tenant, requestMeta(req), dto.parseQuery(dto.fullOrganizationQuery, query)));
  }

  @Post('set-active')
  async setActive(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.setActive(req.tenant, requestMeta(req), parseBody(dto.setActiveBody, body)));
  }

  @Post('check-slug')
  async checkSlug(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.checkSlug(req.tenant, requestMeta(req), parseBody(dto.checkSlugBody, body).slug));
  }

  @Post('has-permission')
  async hasPermission(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.organizations.hasPermission(req.tenant, requestMeta(req), parseBody(dto.hasPermissionBody, body)));
  }

  @Post('invite-member')
  async invite(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.invitations.invite(req.tenant, requestMeta(req), parseBody(dto.inviteBody, body), req.headers.origin));
  }

  @Post('accept-invitation')
  async accept(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.invitations.accept(req.tenant, requestMeta(req), parseBody(dto.invitationIdBody, body).invitationId));
  }

  @Post('reject-invitation')
  async reject(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.invitations.reject(req.tenant, requestMeta(req), parseBody(dto.invitationIdBody, body).invitationId));
  }

  @Post('cancel-invitation')
  async cancel(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.invitations.cancel(req.tenant, requestMeta(req), parseBody(dto.invitationIdBody, body).invitationId));
  }

  @Get('get-invitation')
  async getInvitation(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.invitations.get(req.tenant, requestMeta(req), dto.parseQuery(dto.invitationQuery, query).id));
  }

  @Get('list-invitations')
  async listInvitations(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.invitations.list(req.tenant, requestMeta(req), dto.parseQuery(dto.listInvitationsQuery, query).organizationId));
  }

  @Get('list-user-invitations')
  async listUserInvitations(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.invitations.listForUser(req.tenant, requestMeta(req), dto.parseQuery(dto.userInvitationsQuery, query).email));
  }

  @Post('remove-member')
  async removeMember(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.members.remove(req.tenant, requestMeta(req), parseBody(dto.removeMemberBody, body)));
  }

  @Post('update-member-role')
  async updateMemberRole(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.members.updateRole(req.tenant, requestMeta(req), parseBody(dto.updateMemberRoleBody, body)));
  }

  @Post('leave')
  async leave(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.members.leave(req.tenant, requestMeta(req), parseBody(dto.organizationIdBody, body).organizationId));
  }

  @Get('list-members')
  async listMembers(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.members.list(req.tenant, requestMeta(req), dto.parseQuery(dto.listMembersQuery, query)));
  }

  @Get('get-active-member')
  async activeMember(@Req() req: AuthRequest, @Res() res: Response) {
    return reply(res, await this.members.activeMember(req.tenant, requestMeta(req)));
  }

  @Get('get-active-member-role')
  async activeMemberRole(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    return reply(res, await this.members.activeMemberRole(req.tenant, requestMeta(req), dto.parseQuery(dto.memberRoleQuery, query)));
  }
}
