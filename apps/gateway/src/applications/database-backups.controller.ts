import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { JsonBodyGuard } from '../common/index.js';
import { CurrentApplication, CurrentOwner, type OwnedApplication, OwnedApplicationRoute, type OwnerPrincipal } from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';
import { DatabaseBackupsService } from './database-backups.service.js';

/** Backups and point-in-time restores of an application's own database (owners' API; `slipway db …`). */
@Controller('dashboard/api/applications/:appId/database')
@OwnedApplicationRoute()
export class DatabaseBackupsController {
  constructor(private readonly backups: DatabaseBackupsService) {}

  @Get('backups')
  @OwnersApi({
    summary:
      "What the application's database can be restored to: `pointInTime` (any time from `earliest` to now: the plan's window, `restoreWindowDaysPerPlan`, since the oldest base backup kept), the base backups and restore points, recent restores, and the platform's backup health. `slipway db backups`.",
    errors: ['not_found', 'unavailable'],
  })
  list(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication) {
    return this.backups.list(owner, app);
  }

  @Post('backups')
  @HttpCode(201)
  @UseGuards(JsonBodyGuard)
  @OwnersApi({
    summary: 'Marks a named restore point now (`{"label"}`), e.g. before a risky migration; restore to it later by its id. `slipway db backup --label …`.',
    errors: ['bad_request', 'not_found', 'rate_limited', 'unavailable'],
  })
  mark(@CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.backups.mark(app, body);
  }

  @Post('restores')
  @HttpCode(202)
  @UseGuards(JsonBodyGuard)
  @OwnersApi({
    summary:
      'Restores the database to a point in time: `{"to": "<ISO time | backup id>", "into": "new" | "in_place"}`. `new`: a database beside it (same role; its name in the answer). `in_place` (must be said explicitly): the application keeps its DATABASE_URL; its queries wait a moment while the restored database is swapped in, and the one it replaced is kept (`keptDatabase`). Poll `…/restores/:restoreId`. `slipway db restore --to …`.',
    errors: ['bad_request', 'not_found', 'restore_in_progress', 'restore_point_unavailable', 'rate_limited', 'unavailable'],
  })
  restore(@CurrentOwner() owner: OwnerPrincipal, @CurrentApplication() app: OwnedApplication, @Body() body: unknown) {
    return this.backups.restore(owner, app, body);
  }

  @Get('restores/:restoreId')
  @OwnersApi({
    summary: 'A restore: `status` (queued, running, succeeded, failed), the `step` it is at, the database it produced, its size, or the error.',
    errors: ['not_found', 'unavailable'],
  })
  status(@CurrentApplication() app: OwnedApplication, @Param('restoreId') restoreId: string) {
    return this.backups.restoreStatus(app, restoreId);
  }
}
