import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { sourceKey, type BlobStore } from '@slipway/blob';
import { LIMITS } from '@slipway/contract';
import {
  ActiveDeployExistsError,
  DeploymentsRepository,
  HourlyLimitReachedError,
  asApplicationId,
  asDeploymentId,
  type AdmissionState,
  type ApplicationId,
} from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { Request, Response } from 'express';
import type { ApiPrincipal } from '../api-auth/index.js';
import { BLOB_STORE } from '../common/index.js';
import { GATEWAY_CONFIG, uploadLimits, type GatewayConfig } from '../config.js';
import { DeployQueue } from './deploy-queue.js';
import { SourceIntakeService } from './source/source-intake.service.js';
import { ClientGoneError } from './source/upload-receiver.js';
import { StorageQuota } from './storage-quota.js';
import { UploadSlots } from './upload-slots.js';

const HOUR_MS = 3_600_000;

export interface DeployAccepted {
  taskId: string;
  status: 'queued';
}

/**
 * `POST /api/v1/deploy`: cheap refusals first (format, Redis, one active deploy, hourly limit,
 * uploads in progress) so nobody uploads 200 MB for a 409; then the source is streamed into blob storage, the row
 * committed, and only then the job enqueued.
 */
@Injectable()
export class DeployService {
  private readonly logger = new Logger('Deploy');

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly queue: DeployQueue,
    private readonly deployments: DeploymentsRepository,
    private readonly intake: SourceIntakeService,
    private readonly slots: UploadSlots,
    private readonly quota: StorageQuota,
  ) {}

  async accept(principal: ApiPrincipal, req: Request, res: Response): Promise<DeployAccepted> {
    const applicationId = asApplicationId(principal.applicationId);
    const timing = new AcceptTiming(req);
    this.assertUploadShape(req);
    // All before a byte of the body is read, side by side; Redis being away answers first.
    const [reachable, admitted, room] = await Promise.allSettled([
      this.queue.assertReachable(),
      this.assertMayDeploy(applicationId),
      this.quota.assertRoomLeft(applicationId),
    ]);
    if (reachable.status === 'rejected') throw reachable.reason;
    if (admitted.status === 'rejected') throw admitted.reason;
    if (room.status === 'rejected') throw room.reason;

    // Last of the cheap refusals: the uploads this application and key may have in progress.
    const slot = await this.slots.acquire(principal);
    const taskId = randomUUID();
    const key = sourceKey(taskId);
    const { source, rootDirectory } = await this.intake
      .store(req, res, key)
      .catch((error: unknown) => {
        // Nobody is left to answer; a coded error keeps this out of the 500 log.
        if (error instanceof ClientGoneError) throw new ApiException('bad_request', 'The upload was interrupted.');
        throw error;
      })
      // Released in the background (it never rejects; a lost release expires with its lease): the
      // answer does not wait for one more Redis round trip.
      .finally(() => void slot.release());
    timing.mark('store');
    try {
      await this.quota.assertSourceFits(applicationId, source.bytes);
      await this.deployments.insertQueued(
        applicationId,
        {
          id: asDeploymentId(taskId),
          sourceKey: key,
          sourceBytes: source.bytes,
          rootDirectory,
          deadlineAt: new Date(Date.now() + this.config.DEPLOY_DEADLINE_MINUTES * 60_000),
        },
        LIMITS.deploysPerHourPerApplication,
      );
    } catch (error) {
      await this.blobs.delete(key);
      if (error instanceof ActiveDeployExistsError) throw await this.inProgress(applicationId);
      if (error instanceof HourlyLimitReachedError) throw await this.rateLimited(applicationId);
      throw error;
    }
    timing.mark('row');
    try {
      await this.queue.enqueue({ deploymentId: taskId, applicationId });
    } catch (error) {
      // The row is committed and durable: the build worker's reconciler enqueues queued rows
      // that Redis does not know, so the deploy is accepted all the same.
      this.logger.error(`deployment ${taskId} committed but not enqueued (${(error as Error).message}); the reconciler will enqueue it`);
    }
    timing.mark('queue');
    res.setHeader('Server-Timing', timing.header());
    this.logger.log(
      `deployment ${taskId} queued for application ${applicationId} (${source.files} files, ${source.bytes} bytes${rootDirectory ? `, root directory ${rootDirectory}` : ''})`,
    );
    return { taskId, status: 'queued' };
  }

  private assertUploadShape(req: Request): void {
    const type = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data\s*;/i.test(type)) {
      throw new ApiException('bad_request', 'Send the source as multipart/form-data: repeated "files" with matching "paths", or one "archive".');
    }
    const length = Number(req.headers['content-length'] ?? NaN);
    if (length === 0) throw new ApiException('empty', 'Send the source: repeated "files" with matching "paths", or one "archive".');
    const max = uploadLimits(this.config).maxUploadBytes;
    if (length > max) throw new ApiException('too_large', `The upload is larger than ${max} bytes.`, {}, { Connection: 'close' });
  }

  private async assertMayDeploy(applicationId: ApplicationId): Promise<void> {
    const state = await this.deployments.admissionState(applicationId);
    if (state.activeId) throw inProgressError(state.activeId);
    if (state.recentCreatedAtMs.length >= LIMITS.deploysPerHourPerApplication) throw rateLimitedError(state);
  }

  private async inProgress(applicationId: ApplicationId): Promise<ApiException> {
    return inProgressError((await this.deployments.admissionState(applicationId)).activeId);
  }

  private async rateLimited(applicationId: ApplicationId): Promise<ApiException> {
    return rateLimitedError(await this.deployments.admissionState(applicationId));
  }
}

/**
 * The `Server-Timing` of an accepted deploy (shown by browsers' devtools, read by
 * bench/deploy-accept). `upload`: from the handler's start until the gateway read the body's last
 * byte (the source is validated and stored while it arrives). After that byte: `store` (end of
 * the source tar, blob flush and rename), `row` (the deployment committed), `queue` (the job
 * added), and `accept`, their sum: the part of the latency that is not the upload.
 */
class AcceptTiming {
  private readonly startedAt = performance.now();
  private lastByteAt: number | undefined;
  private readonly marks: [string, number][] = [];

  constructor(req: Request) {
    if (req.readableEnded) this.lastByteAt = this.startedAt;
    else req.once('end', () => (this.lastByteAt = performance.now()));
  }

  mark(name: string): void {
    this.marks.push([name, performance.now()]);
  }

  header(): string {
    const now = performance.now();
    // The marks come after the last byte (the source is stored only once the body has ended).
    const lastByteAt = this.lastByteAt ?? this.startedAt;
    const parts = [`upload;dur=${ms(lastByteAt - this.startedAt)}`];
    let previous = lastByteAt;
    for (const [name, at] of this.marks) {
      parts.push(`${name};dur=${ms(at - previous)}`);
      previous = at;
    }
    parts.push(`accept;dur=${ms(now - lastByteAt)}`);
    return parts.join(', ');
  }
}

const ms = (value: number): string => value.toFixed(2);

function inProgressError(taskId: string | null): ApiException {
  return new ApiException('deploy_in_progress', 'A deploy of this application is already queued, building or releasing; poll it or wait for it to finish.', {
    taskId,
  });
}

/** The next slot opens when the oldest deploy that keeps the window full is an hour old. */
function rateLimitedError(state: AdmissionState): ApiException {
  const limit = LIMITS.deploysPerHourPerApplication;
  const createdAt = state.recentCreatedAtMs;
  const freeing = createdAt[Math.max(0, createdAt.length - limit)] ?? state.nowMs;
  const retryAfterSeconds = Math.max(1, Math.ceil((freeing + HOUR_MS - state.nowMs) / 1000));
  return new ApiException(
    'rate_limited',
    `This application has had ${limit} deploys in the last hour; try again in ${retryAfterSeconds} seconds.`,
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
