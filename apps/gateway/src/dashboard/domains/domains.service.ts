import { Inject, Injectable } from '@nestjs/common';
import { ApiException } from '@slipway/server';
import { RoutesPublisher } from '../../common/routes.publisher.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config.js';
import { TenantChangedPublisher } from '../../sign-in/tenant-changed.publisher.js';
import { parseBody } from '../common/body.js';
import { isUuid } from '../common/ids.js';
import { AddDomainBody } from './dto/add-domain.dto.js';
import { DomainsRepository, DomainTakenError } from './domains.repository.js';

@Injectable()
export class DomainsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly domains: DomainsRepository,
    private readonly tenantChanged: TenantChangedPublisher,
    private readonly routes: RoutesPublisher,
  ) {}

  async list(applicationId: string) {
    return { domains: (await this.domains.list(applicationId)).map(view) };
  }

  async add(applicationId: string, body: unknown) {
    const { hostname } = parseBody(AddDomainBody, body, 'Send {"hostname"}.');
    const publishing = this.config.APPS_DOMAIN.map((d) => d.replace(/:\d+$/, ''));
    if (publishing.some((d) => hostname === d || hostname.endsWith(`.${d}`))) {
      throw new ApiException('bad_request', `${hostname} is under the platform's own publishing domain; attach a domain you own.`);
    }
    try {
      const domain = view(await this.domains.add(applicationId, hostname, this.originsFor(hostname)));
      // The sign-in service caches trusted origins and the edges route by host: tell both.
      await Promise.all([this.tenantChanged.publish(applicationId), this.routes.routesChanged(applicationId)]);
      return domain;
    } catch (error) {
      if (error instanceof DomainTakenError) throw new ApiException('domain_taken', `${hostname} is already attached to an application.`);
      throw error;
    }
  }

  async remove(applicationId: string, id: string) {
    if (!isUuid(id) || !(await this.domains.remove(applicationId, id))) throw new ApiException('not_found', 'No such domain on this application.');
    await Promise.all([this.tenantChanged.publish(applicationId), this.routes.routesChanged(applicationId)]);
    return { id, removed: true };
  }

  /** Custom domains are served over https; a platform publishing over plain http (local) trusts both. */
  private originsFor(hostname: string): string[] {
    return this.config.APPS_SCHEME === 'http' ? [`https://${hostname}`, `http://${hostname}`] : [`https://${hostname}`];
  }
}

function view(domain: { id: string; hostname: string; createdAt: Date; origins: { origin: string }[] }) {
  return { id: domain.id, hostname: domain.hostname, createdAt: domain.createdAt, trustedOrigins: domain.origins.map((o) => o.origin) };
}
