import { Body, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Response } from 'express';
import { z } from '@slipway/config';
import { AuthErrorFilter, parseBody, reply } from '../common/index.js';
import { requestMeta, type AuthRequest } from '../pipeline/index.js';
import { UpdateUserService } from './update-user.service.js';

const updateUserBody = z.object({ name: z.string().trim().min(1).max(200).optional(), image: z.string().max(2048).nullish(), email: z.unknown().optional() });

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class UpdateUserController {
  constructor(private readonly users: UpdateUserService) {}

  @Post('update-user')
  async update(@Req() req: AuthRequest, @Res() res: Response, @Body() body: unknown) {
    return reply(res, await this.users.update(req.tenant, requestMeta(req), parseBody(updateUserBody, body)));
  }
}
