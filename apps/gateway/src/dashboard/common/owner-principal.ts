import type { PlanName } from '@slipway/contract';

/** Who is using the dashboard: an owner signed in with a session cookie. */
export interface OwnerPrincipal {
  id: string;
  email: string;
  name: string | null;
  plan: PlanName;
  sessionId: string;
}

/** An application of the signed-in owner, resolved from the `:appId` route parameter. */
export interface OwnedApplication {
  id: string;
  name: string;
  slug: string;
}

export interface DashboardRequest {
  owner?: OwnerPrincipal;
  ownedApplication?: OwnedApplication;
}
