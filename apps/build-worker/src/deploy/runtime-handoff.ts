import { RELEASE_START_PATH, SWITCH_RELEASE_PATH, edgeInternalToken, type PortFound } from '@slipway/runtime';
import { StepFailure } from '../pipeline/step-recorder.js';

export type RuntimeContainment = { status: 'on' } | { status: 'off'; reason: string };

/** A healthy release as the edge reports it. */
export interface RuntimeStart {
  containment: RuntimeContainment;
  /** The app ignores PORT and was found listening on one port of its own, which the edge routes to. */
  portFound?: PortFound;
}

/** The edge's `portFound`, when it is one (two port numbers). */
function portFoundOf(value: unknown): PortFound | undefined {
  const found = value as Partial<PortFound> | undefined;
  return found && Number.isInteger(found.port) && Number.isInteger(found.envPort) ? { port: found.port!, envPort: found.envPort! } : undefined;
}

/** Asks the edge to start a Node release and waits until it is healthy (see libs/runtime handoff). */
export class RuntimeHandoff {
  constructor(
    private readonly edgeUrl: string,
    private readonly masterKey: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Resolves once the release is healthy, with how the edge contains it (`off` carries the
   * reason, which becomes the deploy's `unsandboxed_runtime` hazard) and the port it was found
   * listening on when it ignores PORT.
   */
  async start(releaseId: string, log: (line: string) => void): Promise<RuntimeStart> {
    const url = `${this.edgeUrl}${RELEASE_START_PATH(releaseId)}`;
    log(`handing release ${releaseId} to the edge and waiting until it is healthy`);
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${edgeInternalToken(this.masterKey)}` }, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new StepFailure('release_failed', `the edge at ${this.edgeUrl} did not answer: ${(error as Error).message}`);
    }
    const body = (await response.json().catch(() => ({}))) as { error?: string; code?: string; logTail?: string; sandbox?: RuntimeContainment; portFound?: unknown };
    if (response.ok) {
      log('the new release is healthy');
      const containment: RuntimeContainment = body.sandbox?.status === 'off' ? { status: 'off', reason: String(body.sandbox.reason ?? 'no reason given') } : { status: 'on' };
      const portFound = portFoundOf(body.portFound);
      return portFound ? { containment, portFound } : { containment };
    }
    if (response.status === 503 && body.code === 'sandbox_unavailable') {
      throw new StepFailure('sandbox_unavailable', `the edge cannot sandbox the application, so nothing of it ran: ${body.error ?? 'no reason given'}`);
    }
    if (response.status === 422) throw new StepFailure('release_unhealthy', body.error ?? 'the new release did not become healthy; the previous release keeps serving', body.logTail ? `${body.logTail}\n` : '');
    throw new StepFailure('release_failed', `the edge refused the release (${response.status}): ${body.error ?? 'no reason given'}`);
  }

  /**
   * Asks the edge to serve the release now, before the worker commits it as live, so a deploy is
   * never reported succeeded while its address still serves the previous release (the data plane
   * applies a change in a reload). Not fatal: an edge that cannot be asked switches on the routes
   * message that follows the commit, as before.
   */
  async switchTo(applicationId: string, releaseId: string, log: (line: string) => void): Promise<void> {
    const url = `${this.edgeUrl}${SWITCH_RELEASE_PATH(applicationId, releaseId)}`;
    try {
      const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${edgeInternalToken(this.masterKey)}` }, signal: AbortSignal.timeout(Math.min(this.timeoutMs, 30_000)) });
      if (response.ok) log('the edge serves the new release');
      else log(`the edge did not switch yet (${response.status}); it will on the routes message`);
    } catch (error) {
      log(`the edge did not answer the switch (${(error as Error).message}); it will on the routes message`);
    }
  }
}
