import { Inject, Injectable, Logger } from '@nestjs/common';
import { refreshTrustedOrigins } from '@slipway/sign-in-core';
import type { BlobStore } from '@slipway/blob';
import { LIMITS, isPreviewName } from '@slipway/contract';
import {
  ApplicationsRepository,
  DeploymentsRepository,
  PREVIEW_NAME_PATTERN,
  PreviewNameTakenError,
  TooManyPreviewsError,
  asApplicationId,
  previewSlug,
  type ApplicationId,
  type PreviewRow,
} from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { Request, Response } from 'express';
import { applicationUrl } from '../applications/index.js';
import { BLOB_STORE, RoutesPublisher } from '../common/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import type { OwnedApplication, OwnerPrincipal, OwnersApiCaller } from '../owners/index.js';
import { TenantChangedPublisher } from '../sign-in-services/index.js';
import { DeployService, type DeployAccepted } from './deploy.service.js';

export type DeployTarget = 'production' | 'preview';

export interface PreviewView {
  name: string;
  url: string;
  expiresAt: string;
  createdAt: string;
  liveReleaseId: string | null;
}

export type OwnersDeployAccepted = DeployAccepted & { target: DeployTarget; preview?: PreviewView };

/**
 * Deploys through the owners' API (`POST …/deploy?target=production|preview&name=…`) and the
 * previews they make. A preview is an application of its own under its parent (see
 * libs/platform-data `Previews`): built like any deploy, served at `{slug}--{name}`, given the
 * parent's `preview`-scoped secrets, database and sign-in service; it never touches the parent's
 * live release. Its expiry is reset by each deploy to it; PreviewExpiry removes expired ones.
 */
@Injectable()
export class PreviewsService {
  private readonly logger = new Logger('Previews');

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly applications: ApplicationsRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly deploy: DeployService,
    private readonly routes: RoutesPublisher,
    private readonly tenants: TenantChangedPublisher,
  ) {}

  async accept(
    app: OwnedApplication,
    owner: OwnerPrincipal,
    caller: OwnersApiCaller,
    query: { target?: string; name?: string },
    req: Request,
    res: Response,
  ): Promise<OwnersDeployAccepted> {
    const target = deployTarget(query.target);
    // The upload counters: per application, and per credential (a project key; else the owner).
    const credential = caller.kind === 'project-key' ? `project-key:${caller.applicationId}` : `owner:${owner.id}`;
    if (target === 'production') {
      if (query.name !== undefined) throw new ApiException('bad_request', 'A production deploy takes no "name"; send target=preview to deploy a preview.');
      return { ...(await this.deploy.accept({ applicationId: app.id, apiKeyId: credential }, req, res)), target };
    }
    const name = previewName(query.name);
    const slug = previewSlug(app.slug, name);
    const limit = LIMITS.previewsPerPlan[owner.plan] ?? 0;
    let preview: PreviewRow;
    try {
      preview = await this.applications.previews.ensure(app.id, name, this.config.PREVIEW_TTL_HOURS * 3_600_000, limit);
    } catch (error) {
      if (error instanceof TooManyPreviewsError) {
        throw new ApiException(
          'preview_limit_reached',
          `The ${owner.plan} plan allows ${limit} previews at once (all your applications counted); delete one (slipway previews rm <name>) or let one expire.`,
          { limit },
        );
      }
      if (error instanceof PreviewNameTakenError)
        throw new ApiException('bad_request', `The address ${slug} is another application's; choose another preview name.`);
      throw error;
    }
    const accepted = await this.deploy.accept({ applicationId: preview.id, apiKeyId: credential }, req, res);
    this.logger.log(`preview ${name} of application ${app.id}: deployment ${accepted.taskId}`);
    return { ...accepted, target, preview: this.view(preview) };
  }

  /** The application's previews, newest first, with the owner's plan limit and how long one lives. */
  async list(app: OwnedApplication, owner: OwnerPrincipal): Promise<{ previews: PreviewView[]; limit: number; ttlHours: number }> {
    const previews = await this.applications.previews.list(app.id);
    return { previews: previews.map((p) => this.view(p)), limit: LIMITS.previewsPerPlan[owner.plan] ?? 0, ttlHours: this.config.PREVIEW_TTL_HOURS };
  }

  /** Every expired preview (no deploy of it in progress) removed as by `remove`: what the expiry sweep calls. */
  async removeExpired(): Promise<number> {
    let count = 0;
    for (const preview of await this.applications.previews.expired()) {
      if ((await removePreview(this.removal(), preview.parentId, preview.id)) === 'removed') count++;
    }
    return count;
  }

  private removal(): PreviewRemoval {
    return {
      applications: this.applications,
      blobs: this.blobs,
      routesChanged: (id) => this.routes.routesChanged(id),
      tenantChanged: (id) => this.tenants.publish(id),
      origins: { appsDomains: this.config.APPS_DOMAIN, appsScheme: this.config.APPS_SCHEME },
    };
  }

  /** Deletes a preview: its address stops answering, its deployments, releases and stored bytes go. */
  async remove(app: OwnedApplication, name: string): Promise<{ removed: string }> {
    const preview = PREVIEW_NAME_PATTERN.test(name) ? await this.applications.previews.find(app.id, name) : null;
    if (!preview) throw new ApiException('not_found', `This application has no preview named ${name.slice(0, 64)}.`);
    const removed = await removePreview(this.removal(), app.id, preview.id);
    if (removed === 'in_progress')
      throw new ApiException('deploy_in_progress', 'A deploy of this preview is in progress; delete it once that deploy has finished.', {
        taskId: (await this.deployments.admissionState(preview.id)).activeId,
      });
    if (removed === 'not_found') throw new ApiException('not_found', `This application has no preview named ${name.slice(0, 64)}.`);
    return { removed: name };
  }

  private view(preview: PreviewRow): PreviewView {
    return {
      name: preview.name,
      url: applicationUrl(this.config, preview.slug),
      expiresAt: preview.expiresAt.toISOString(),
      createdAt: preview.createdAt.toISOString(),
      liveReleaseId: preview.liveReleaseId,
    };
  }
}

/** What removing a preview needs (the owner's delete and the expiry sweep). */
export interface PreviewRemoval {
  applications: ApplicationsRepository;
  blobs: BlobStore;
  routesChanged: (applicationId: string) => Promise<void>;
  tenantChanged: (applicationId: string) => Promise<void>;
  origins: { appsDomains: string[]; appsScheme: string };
}

/**
 * The row first (its address stops routing once the edges hear of it), then its blobs; the
 * parent's sign-in service stops trusting the preview's address.
 */
export async function removePreview(
  with_: PreviewRemoval,
  parentId: ApplicationId,
  previewId: ApplicationId,
): Promise<'removed' | 'not_found' | 'in_progress'> {
  const removed = await with_.applications.previews.remove(parentId, previewId);
  if (removed === 'not_found' || removed === 'in_progress') return removed;
  await with_.routesChanged(previewId);
  await Promise.all(removed.blobKeys.map((key) => with_.blobs.delete(key).catch(() => undefined)));
  await refreshTrustedOrigins(with_.applications, asApplicationId(parentId), with_.origins);
  await with_.tenantChanged(parentId);
  return 'removed';
}

function deployTarget(value: string | undefined): DeployTarget {
  if (value === undefined || value === 'production') return 'production';
  if (value === 'preview') return 'preview';
  throw new ApiException('bad_request', 'target is "production" (the default) or "preview".');
}

/** The preview's name: given, or `preview`. */
function previewName(value: string | undefined): string {
  const name = value ?? 'preview';
  if (!isPreviewName(name))
    throw new ApiException(
      'bad_request',
      'A preview name is 1 to 32 lowercase letters, digits and single dashes, starting and ending with a letter or digit ("--" separates the application from the preview in its address).',
    );
  return name;
}
