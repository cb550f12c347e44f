import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The build worker → edge hand-off. For a Node release the worker calls
 * `POST {EDGE_INTERNAL_URL}/_slipway/releases/{releaseId}/start` with
 * `authorization: Bearer edgeInternalToken(SLIPWAY_MASTER_KEY)`; the edge starts the release next
 * to the live one and answers 200 once it is healthy, or 422 `{error, logTail}` when it never
 * becomes healthy (the live release keeps serving). Then the worker makes it live
 * (`applications.live_release_id`) and publishes `{applicationId}` on `routesChannel(prefix)`;
 * every edge replica reloads that application's route and swaps.
 */
export const RELEASE_START_PATH = (releaseId: string) => `/_slipway/releases/${releaseId}/start`;
export const RELEASE_START_PATTERN = /^\/_slipway\/releases\/([0-9a-f-]{36})\/start$/;

export function routesChannel(prefix: string): string {
  return `${prefix}:routes`;
}

/** Message on the routes channel: reload this application's route (or everything). */
export interface RoutesMessage {
  applicationId?: string;
  /** Set when a domain changed; the edge reloads its whole table. */
  all?: boolean;
}

/** The token the worker presents to the edge; derived, so no extra secret to configure. */
export function edgeInternalToken(masterKeyBase64: string): string {
  return createHmac('sha256', Buffer.from(masterKeyBase64, 'base64')).update('slipway:edge-internal:v1').digest('base64url');
}

export function isEdgeInternalToken(masterKeyBase64: string, header: string | undefined): boolean {
  const expected = Buffer.from(`Bearer ${edgeInternalToken(masterKeyBase64)}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
