import { RELEASE_START_PATH, edgeInternalToken } from '@slipway/runtime';
import { StepFailure } from '../pipeline/step-recorder.js';

/** Asks the edge to start a Node release and waits until it is healthy (see libs/runtime handoff). */
export class RuntimeHandoff {
  constructor(
    private readonly edgeUrl: string,
    private readonly masterKey: string,
    private readonly timeoutMs: number,
  ) {}

  async start(releaseId: string, log: (line: string) => void): Promise<void> {
    const url = `${this.edgeUrl}${RELEASE_START_PATH(releaseId)}`;
    log(`handing release ${releaseId} to the edge and waiting until it is healthy`);
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${edgeInternalToken(this.masterKey)}` }, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new StepFailure('release_failed', `the edge at ${this.edgeUrl} did not answer: ${(error as Error).message}`);
    }
    const body = (await response.json().catch(() => ({}))) as { error?: string; logTail?: string };
    if (response.ok) {
      log('the new release is healthy');
      return;
    }
    if (response.status === 422) throw new StepFailure('release_unhealthy', body.error ?? 'the new release did not become healthy; the previous release keeps serving', body.logTail ? `${body.logTail}\n` : '');
    throw new StepFailure('release_failed', `the edge refused the release (${response.status}): ${body.error ?? 'no reason given'}`);
  }
}
