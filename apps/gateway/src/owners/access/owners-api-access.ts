/**
 * Who may use an owners'-API route (docs/reference/owners-api.md):
 * - `bearer`: false → the dashboard session cookie only (owner sign-out, personal access tokens).
 * - `projectKeys`: 'own-application' → a project API key may call it; on an application route
 *   only for its own application (any other → 404), on an owner route the controller scopes the
 *   answer to the key's application. 'refused' → 403 for a project key (after the 404 of an
 *   application route that is not the key's).
 *
 * Its own file: the route decorators (owner-guards.ts) set it and the guards read it.
 */
export interface OwnersApiAccess {
  bearer: boolean;
  projectKeys: 'own-application' | 'refused';
}

export const OWNERS_API_ACCESS = 'slipway:owners-api-access';
