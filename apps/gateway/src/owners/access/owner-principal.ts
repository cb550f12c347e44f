import type { PlanName } from '@slipway/contract';
import type { ApplicationId, OwnerId } from '@slipway/platform-data';

/**
 * Who is using the owners' API (`/dashboard/api`), as the owner it acts for: an owner signed in
 * to the dashboard (session cookie), an owner's personal access token, or a project API key
 * (which acts for its application's owner, on that one application only).
 */
export interface OwnerPrincipal {
  id: OwnerId;
  email: string;
  name: string | null;
  plan: PlanName;
  /** The dashboard session; null for a bearer credential (there is no session to end). */
  sessionId: string | null;
}

/** How the caller proved who it is; a project key also says which one application it may reach. */
export type OwnersApiCaller = { kind: 'session' } | { kind: 'token' } | { kind: 'project-key'; applicationId: ApplicationId };

/** An application of the signed-in owner, resolved from the `:appId` route parameter. */
export interface OwnedApplication {
  id: ApplicationId;
  name: string;
  slug: string;
}

export interface DashboardRequest {
  owner?: OwnerPrincipal;
  caller?: OwnersApiCaller;
  ownedApplication?: OwnedApplication;
}
