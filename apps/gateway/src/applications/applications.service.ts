import { Inject, Injectable } from '@nestjs/common';
import { slugify, type ApplicationDetails, type ApplicationSummary, type ServerView } from '@slipway/contract';
import { ApplicationsRepository, SlugTakenError, type OwnerId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { parseBody } from '../common/index.js';
import type { OwnedApplication } from '../owners/index.js';
import { applicationUrl } from './application-address.js';
import { CreateApplicationBody } from './dto/create-application.dto.js';

const SLUG_ATTEMPTS = 5;

@Injectable()
export class ApplicationsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly applications: ApplicationsRepository,
  ) {}

  /** The owner's applications, or only `only` (a project API key's own application). */
  async list(ownerId: OwnerId, only?: string): Promise<{ applications: ServerView<ApplicationSummary>[] }> {
    const rows = (await this.applications.listOwned(ownerId)).filter((app) => only === undefined || app.id === only);
    return {
      applications: rows.map((app) => ({
        id: app.id,
        name: app.name,
        slug: app.slug,
        url: applicationUrl(this.config, app.slug),
        createdAt: app.createdAt,
        latestDeployment: app.deployments[0] ?? null,
      })),
    };
  }

  /** name → slug; "my-shop" taken → "my-shop-2", "my-shop-3"… (a race on the unique index retries). */
  async create(ownerId: OwnerId, body: unknown) {
    const { name } = parseBody(CreateApplicationBody, body, 'Send {"name"}.');
    const base = slugify(name);
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt++) {
      const candidates = Array.from({ length: 20 }, (_, i) => (i === 0 ? base : `${base.slice(0, 50)}-${i + 1 + attempt * 20}`));
      const taken = await this.applications.takenSlugs(candidates);
      const slug = candidates.find((c) => !taken.has(c));
      if (!slug) continue;
      try {
        return this.view(await this.applications.create(ownerId, name, slug));
      } catch (error) {
        if (!(error instanceof SlugTakenError)) throw error;
      }
    }
    throw new ApiException('bad_request', 'Could not find a free address for this name; try another name.');
  }

  async get(ownerId: OwnerId, app: OwnedApplication): Promise<ServerView<ApplicationDetails>> {
    const row = await this.applications.details(ownerId, app.id);
    if (!row) throw new ApiException('not_found', 'No such application.');
    return {
      ...this.view(row),
      createdAt: row.createdAt,
      liveReleaseId: row.liveReleaseId,
      signInEnabled: row.signInService !== null,
      hasDatabase: row.database !== null,
      apiBaseUrl: `${this.config.PUBLIC_URL.replace(/\/+$/, '')}/api/v1`,
    };
  }

  private view(app: { id: string; name: string; slug: string }): ServerView<ApplicationSummary> {
    return { id: app.id, name: app.name, slug: app.slug, url: applicationUrl(this.config, app.slug) };
  }
}
