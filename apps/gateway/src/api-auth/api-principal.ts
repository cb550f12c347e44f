import type { ApplicationId } from '@slipway/platform-data';

/** Who is calling the deployment API: one application, identified by its project API key. */
export interface ApiPrincipal {
  applicationId: ApplicationId;
  apiKeyId: string;
}
