import { Body, Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { AuthErrorFilter, AuthErrors, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { requirePlugin } from '../tenants/index.js';
import { magicLinkRequestBody, magicLinkVerifyQuery } from './dto/magic-link.dto.js';
import { MagicLinkService } from './magic-link.service.js';

/** Better Auth's magic-link plugin (`magicLinkClient`), on while `settings.plugins.magicLink.enabled`. */
@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class MagicLinkController {
  constructor(private readonly magicLinks: MagicLinkService) {}

  @Post('sign-in/magic-link')
  async send(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    requirePlugin(req.tenant, 'magicLink');
    return reply(res, await this.magicLinks.send(req.tenant, parseBody(magicLinkRequestBody, body)));
  }

  @Get('magic-link/verify')
  async verify(@Req() req: AuthRequest, @Res() res: Response, @Query() query: unknown) {
    requirePlugin(req.tenant, 'magicLink');
    const parsed = magicLinkVerifyQuery.safeParse(query);
    if (!parsed.success) throw AuthErrors.validation(`[query.${parsed.error.issues[0]!.path.join('.')}] ${parsed.error.issues[0]!.message}`);
    return reply(res, await this.magicLinks.verify(req.tenant, parsed.data, requestMeta(req)));
  }
}
