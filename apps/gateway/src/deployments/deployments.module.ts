import { Module } from '@nestjs/common';
import { AuthModule } from '../api-auth/index.js';
import { OwnerAccessModule } from '../owners/index.js';
import { OwnerDeploymentsController } from './owner-deployments.controller.js';
import { DeployController } from './deploy.controller.js';
import { DeployQueue } from './deploy-queue.js';
import { DeployService } from './deploy.service.js';
import { DeploymentsController } from './deployments.controller.js';
import { DeploymentsService } from './deployments.service.js';
import { ReleaseGoLiveService } from './release-go-live.service.js';
import { PreviewExpiry } from './preview-expiry.js';
import { PreviewsController } from './previews.controller.js';
import { PreviewsService } from './previews.service.js';
import { TenantChangedPublisher } from '../sign-in-services/index.js';
import { SourceIntakeService } from './source/source-intake.service.js';
import { StorageQuota } from './storage-quota.js';
import { UploadSlots } from './upload-slots.js';

/**
 * Deployments: the API's upload (`POST /api/v1/deploy`) and poll (`/api/v1/deployments/:id`), and
 * the owners' API's history, poll and rollback (dashboard and CLI) — side by side over one DeploymentsService.
 */
@Module({
  imports: [AuthModule, OwnerAccessModule],
  controllers: [DeployController, DeploymentsController, OwnerDeploymentsController, PreviewsController],
  providers: [
    DeployService,
    DeployQueue,
    SourceIntakeService,
    UploadSlots,
    StorageQuota,
    DeploymentsService,
    ReleaseGoLiveService,
    PreviewsService,
    PreviewExpiry,
    TenantChangedPublisher,
  ],
})
export class DeploymentsModule {}
