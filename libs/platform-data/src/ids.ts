declare const brand: unique symbol;

/** A string the compiler tells apart from other strings: made only by the functions below. */
export type Branded<B extends string> = string & { readonly [brand]: B };

export type ApplicationId = Branded<'ApplicationId'>;
export type OwnerId = Branded<'OwnerId'>;
export type DeploymentId = Branded<'DeploymentId'>;
export type ReleaseId = Branded<'ReleaseId'>;

/**
 * Each is called where an id enters from outside the repositories: a route guard that checked the
 * caller owns it, a job payload, a row the platform database returned. Repository methods take
 * the branded type first, so an owner id can never be passed where an application id belongs.
 */
export const asApplicationId = (id: string): ApplicationId => id as ApplicationId;
export const asOwnerId = (id: string): OwnerId => id as OwnerId;
export const asDeploymentId = (id: string): DeploymentId => id as DeploymentId;
export const asReleaseId = (id: string): ReleaseId => id as ReleaseId;
