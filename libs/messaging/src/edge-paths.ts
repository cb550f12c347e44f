import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The edge's internal API: its paths and the tokens that open it. The client of the release
 * hand-off is `EdgeHandoff` (edge-handoff.ts); the edge serves these paths (apps/edge internal-api.ts).
 *
 * `POST {EDGE_INTERNAL_URL}/_slipway/releases/{releaseId}/start` with
 * `authorization: Bearer edgeInternalToken(SLIPWAY_MASTER_KEY)`: the edge starts the release next
 * to the live one (a static one: unpacks it) and answers 200 once it is healthy, or 422
 * `{error, logTail}` when it never becomes healthy (the live release keeps serving).
 */
export const RELEASE_START_PATH = (releaseId: string) => `/_slipway/releases/${releaseId}/start`;
export const RELEASE_START_PATTERN = /^\/_slipway\/releases\/([0-9a-f-]{36})\/start$/;
/** Which release of an application this edge serves right now (its data plane included): `{releaseId}`. */
export const APPLIED_RELEASE_PATH = (applicationId: string) => `/_slipway/applications/${applicationId}/applied`;
export const APPLIED_RELEASE_PATTERN = /^\/_slipway\/applications\/([0-9a-f-]{36})\/applied$/;
/**
 * Before a release is committed as live (deploy, rollback, promote): the edge switches the
 * application to it now (route and data plane applied), so it is never reported live before it is served.
 */
export const SWITCH_RELEASE_PATH = (applicationId: string, releaseId: string) => `/_slipway/applications/${applicationId}/switch/${releaseId}`;
export const SWITCH_RELEASE_PATTERN = /^\/_slipway\/applications\/([0-9a-f-]{36})\/switch\/([0-9a-f-]{36})$/;

/** The token the platform's own processes present to the edge; derived, so no extra secret to configure. */
export function edgeInternalToken(masterKeyBase64: string): string {
  return createHmac('sha256', Buffer.from(masterKeyBase64, 'base64')).update('slipway:edge-internal:v1').digest('base64url');
}

export function isEdgeInternalToken(masterKeyBase64: string, header: string | undefined): boolean {
  const expected = Buffer.from(`Bearer ${edgeInternalToken(masterKeyBase64)}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Where a pod of the `kubernetes` driver downloads its release artifact from the edge
 * (`GET`, `authorization: Bearer releaseArtifactToken(SLIPWAY_MASTER_KEY, releaseId)`).
 * The token is derived per release: an app's pod can fetch its own artifact and nothing else
 * (the edge's internal token never leaves the platform's own processes).
 */
export const RELEASE_ARTIFACT_PATH = (releaseId: string) => `/_slipway/artifacts/${releaseId}`;
export const RELEASE_ARTIFACT_PATTERN = /^\/_slipway\/artifacts\/([0-9a-f-]{36})$/;

export function releaseArtifactToken(masterKeyBase64: string, releaseId: string): string {
  return createHmac('sha256', Buffer.from(masterKeyBase64, 'base64')).update(`slipway:release-artifact:v1:${releaseId}`).digest('base64url');
}

export function isReleaseArtifactToken(masterKeyBase64: string, releaseId: string, header: string | undefined): boolean {
  const expected = Buffer.from(`Bearer ${releaseArtifactToken(masterKeyBase64, releaseId)}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
