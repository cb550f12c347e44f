/**
 * Who calls the sign-in platform calls: an owner (personal access token, sees all their
 * applications) or one application (its project API key, sees only itself).
 */
export type SignInPrincipal = { kind: 'owner'; ownerId: string } | { kind: 'application'; applicationId: string };
