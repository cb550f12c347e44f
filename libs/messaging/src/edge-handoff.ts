import { RELEASE_START_PATH, SWITCH_RELEASE_PATH, edgeInternalToken } from './edge-paths.js';

/** How the edge contains a Node release: `off` carries the reason (a deploy's `unsandboxed_runtime` hazard). */
export type EdgeContainment = { status: 'on' } | { status: 'off'; reason: string };

/** An app that ignores PORT, found listening on a port of its own (`port`), which the edge routes to. */
export interface EdgePortFound {
  port: number;
  envPort: number;
}

/** The edge started the release and found it healthy (a static one: unpacked). */
export interface EdgeStarted {
  kind: 'healthy';
  containment: EdgeContainment;
  portFound?: EdgePortFound;
}

/**
 * What the edge answered to a start, one case per answer a caller treats differently. `error` is
 * the edge's own reason when it gave one. In every case but `healthy` the live release keeps serving.
 */
export type EdgeStartOutcome =
  | EdgeStarted
  /** 404: the edge knows no such release. */
  | { kind: 'not_found'; status: 404; error?: string }
  /** 422: it started but never became healthy; `logTail` is its output's end (up to 8000 characters). */
  | { kind: 'unhealthy'; status: 422; error?: string; logTail?: string }
  /** 503 `sandbox_unavailable`: the edge cannot sandbox the application, so nothing of it ran. */
  | { kind: 'sandbox_unavailable'; status: 503; error?: string }
  /** Any other status. */
  | { kind: 'refused'; status: number; error?: string }
  /** No answer: connection refused, a timeout. */
  | { kind: 'unreachable'; message: string };

/** Whether the edge serves the release now; not switched is never fatal (the routes message after the commit switches it). */
export type EdgeSwitchOutcome = { switched: true } | { switched: false; status: number } | { switched: false; message: string };

export interface EdgeHandoffOptions {
  /** `EDGE_INTERNAL_URL`. */
  edgeUrl: string;
  /** `SLIPWAY_MASTER_KEY` (the internal token is derived from it). */
  masterKey: string;
  /** How long a start may take (`RELEASE_TIMEOUT_MS`); a switch waits at most 30 s of it. */
  timeoutMs: number;
}

const SWITCH_TIMEOUT_MS = 30_000;

/**
 * The one client of the edge's release hand-off (the build worker's release step, the gateway's
 * rollback and promote): `start` a release next to the live one and wait until it is healthy,
 * then `switchTo` it before it is committed as live. Never throws: each answer is an outcome the
 * caller maps to its own error (a deploy's `StepFailure`, an API's `ApiException`).
 */
export class EdgeHandoff {
  constructor(private readonly options: EdgeHandoffOptions) {}

  get edgeUrl(): string {
    return this.options.edgeUrl;
  }

  async start(releaseId: string): Promise<EdgeStartOutcome> {
    let response: Response;
    try {
      response = await this.post(RELEASE_START_PATH(releaseId), this.options.timeoutMs);
    } catch (error) {
      return { kind: 'unreachable', message: (error as Error).message };
    }
    const body = (await response.json().catch(() => ({}))) as {
      error?: unknown;
      code?: unknown;
      logTail?: unknown;
      sandbox?: { status?: unknown; reason?: unknown };
      portFound?: unknown;
    };
    const error = typeof body.error === 'string' ? { error: body.error } : {};
    if (response.ok) {
      const containment: EdgeContainment =
        body.sandbox?.status === 'off' ? { status: 'off', reason: String(body.sandbox.reason ?? 'no reason given') } : { status: 'on' };
      const portFound = portFoundOf(body.portFound);
      return portFound ? { kind: 'healthy', containment, portFound } : { kind: 'healthy', containment };
    }
    if (response.status === 404) return { kind: 'not_found', status: 404, ...error };
    if (response.status === 422)
      return { kind: 'unhealthy', status: 422, ...error, ...(typeof body.logTail === 'string' && body.logTail ? { logTail: body.logTail } : {}) };
    if (response.status === 503 && body.code === 'sandbox_unavailable') return { kind: 'sandbox_unavailable', status: 503, ...error };
    return { kind: 'refused', status: response.status, ...error };
  }

  async switchTo(applicationId: string, releaseId: string): Promise<EdgeSwitchOutcome> {
    try {
      const response = await this.post(SWITCH_RELEASE_PATH(applicationId, releaseId), Math.min(this.options.timeoutMs, SWITCH_TIMEOUT_MS));
      await response.body?.cancel().catch(() => undefined);
      return response.ok ? { switched: true } : { switched: false, status: response.status };
    } catch (error) {
      return { switched: false, message: (error as Error).message };
    }
  }

  private post(path: string, timeoutMs: number): Promise<Response> {
    return fetch(`${this.options.edgeUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${edgeInternalToken(this.options.masterKey)}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  }
}

/** The edge's `portFound`, when it is one (two port numbers). */
function portFoundOf(value: unknown): EdgePortFound | undefined {
  const found = value as Partial<EdgePortFound> | undefined;
  return found && Number.isInteger(found.port) && Number.isInteger(found.envPort) ? { port: found.port!, envPort: found.envPort! } : undefined;
}
