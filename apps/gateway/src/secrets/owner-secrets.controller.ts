import { Body, Controller, Delete, Get, Param, Put, Query } from '@nestjs/common';
import { asApplicationId } from '@slipway/platform-data';
import { SecretsService } from './secrets.service.js';
import { CurrentApplication, type OwnedApplication, OwnedApplicationRoute } from '../owners/index.js';
import { OwnersApi } from '../owners-api/index.js';

/**
 * The same SecretsService as `PUT/GET /api/v1/secrets` (one validation, one encryption path),
 * addressed one name at a time. Values are write-only here too.
 */
@Controller('dashboard/api/applications/:appId/secrets')
@OwnedApplicationRoute()
export class OwnerSecretsController {
  constructor(private readonly secrets: SecretsService) {}

  @Get()
  @OwnersApi({
    summary: 'The names set (values are write-only), each with the scopes it has a value in: `all`, `production`, `preview`. `slipway secrets list`.',
    errors: ['unavailable'],
  })
  list(@CurrentApplication() app: OwnedApplication) {
    return this.secrets.listScoped(asApplicationId(app.id));
  }

  @Put()
  @OwnersApi({
    summary:
      'As `PUT /api/v1/secrets` (`{"secrets": {"NAME": "value" | null}}`), in `?scope=all` (the default: production and previews; null deletes the name everywhere), `production` or `preview` (that environment\'s own value, which wins over `all` there). `slipway secrets set [--preview|--production]`.',
    errors: ['bad_request', 'too_large', 'unavailable'],
  })
  put(@CurrentApplication() app: OwnedApplication, @Body() body: unknown, @Query('scope') scope?: string) {
    return this.secrets.put(asApplicationId(app.id), body, scope);
  }

  @Delete(':name')
  remove(@CurrentApplication() app: OwnedApplication, @Param('name') name: string, @Query('scope') scope?: string) {
    return this.secrets.put(asApplicationId(app.id), { secrets: { [name]: null } }, scope);
  }
}
