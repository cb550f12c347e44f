import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  CurrentApplication,
  CurrentCaller,
  CurrentOwner,
  type OwnedApplication,
  OwnedApplicationRoute,
  type OwnerPrincipal,
  type OwnersApiCaller,
} from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';
import { PreviewsService } from './previews.service.js';

/**
 * Deploys of the owners' API (production or a preview) and an application's previews. The
 * source is the same multipart body as `POST /api/v1/deploy`; the target comes in the query
 * string, since it decides where the upload goes before a byte of it is read.
 */
@Controller('dashboard/api/applications/:appId')
@OwnedApplicationRoute()
export class PreviewsController {
  constructor(private readonly previews: PreviewsService) {}

  @Post('deploy')
  @HttpCode(202)
  @OwnersApi({
    summary:
      'Deploy, as `POST /api/v1/deploy` (the same multipart body, limits and answers), to `target=production` (the default) or `target=preview&name=<name>` (default name `preview`): a preview is built and served at `{slug}--{name}` under the apps domain with the `preview` scope of the secrets, never replaces the live release, and expires `PREVIEW_TTL_HOURS` after its last deploy. Poll the task at `…/deployments/<taskId>`. `slipway deploy --preview [name]`.',
    errors: [
      'bad_request',
      'empty',
      'too_large',
      'deploy_in_progress',
      'rate_limited',
      'too_many_uploads',
      'storage_quota_exceeded',
      'preview_limit_reached',
      'unavailable',
    ],
  })
  deploy(
    @CurrentApplication() app: OwnedApplication,
    @CurrentOwner() owner: OwnerPrincipal,
    @CurrentCaller() caller: OwnersApiCaller,
    @Query() query: { target?: string; name?: string },
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    return this.previews.accept(app, owner, caller, { target: query.target, name: query.name }, req, res);
  }

  @Get('previews')
  @OwnersApi({
    summary: "The application's previews, newest first: name, address, expiry, live release; and the plan's limit. `slipway previews`.",
    errors: ['unavailable'],
  })
  list(@CurrentApplication() app: OwnedApplication, @CurrentOwner() owner: OwnerPrincipal) {
    return this.previews.list(app, owner);
  }

  @Delete('previews/:name')
  @HttpCode(200)
  @OwnersApi({
    summary: 'Deletes a preview: its address stops answering; its deployments, releases and stored bytes go. `slipway previews rm <name>`.',
    errors: ['not_found', 'deploy_in_progress', 'unavailable'],
  })
  remove(@CurrentApplication() app: OwnedApplication, @Param('name') name: string) {
    return this.previews.remove(app, name);
  }
}
