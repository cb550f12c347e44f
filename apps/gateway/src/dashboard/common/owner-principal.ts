import type { PlanName } from '@slipway/contract';
import type { ApplicationId, OwnerId } from '@slipway/platform-data';

/** Who is using the dashboard: an owner signed in with a session cookie. */
export interface OwnerPrincipal {
  id: OwnerId;
  email: string;
  name: string | null;
  plan: PlanName;
  sessionId: string;
}

/** An application of the signed-in owner, resolved from the `:appId` route parameter. */
export interface OwnedApplication {
  id: ApplicationId;
  name: string;
  slug: string;
}

export interface DashboardRequest {
  owner?: OwnerPrincipal;
  ownedApplication?: OwnedApplication;
}
