import type { EdgeSwitchOutcome } from '@slipway/messaging';
import type { ApplicationId, ReleaseId } from '@slipway/platform-data';
import type { EdgeStartFailure, ReleaseGoLive } from '@slipway/runtime';
import type { ReleaseHandoff, RuntimeStart } from '../pipeline/deploy-context.js';
import { StepFailure } from '../pipeline/step-recorder.js';

/**
 * A deploy's side of making a release live (libs/runtime `ReleaseGoLive`): the edge's answers
 * as the deploy's step log and failures. A Node release is started on the edge and must be
 * healthy; then the edge is asked to serve it (the commit follows the step: deploy-pipeline.service.ts).
 */
export class RuntimeHandoff implements ReleaseHandoff {
  constructor(
    private readonly live: ReleaseGoLive,
    private readonly edgeUrl: string,
  ) {}

  async prepare(
    applicationId: ApplicationId,
    release: { id: ReleaseId; kind: 'node' | 'static' },
    beforeSwitch: (started: RuntimeStart | null) => Promise<void>,
    log: (line: string) => void,
  ): Promise<void> {
    if (release.kind === 'node') log(`handing release ${release.id} to the edge and waiting until it is healthy`);
    await this.live.prepare(applicationId, release.id, {
      start: release.kind === 'node',
      refused: (outcome) => stepFailureOf(outcome, this.edgeUrl),
      started: async (outcome) => {
        if (outcome) log('the new release is healthy');
        await beforeSwitch(
          outcome && (outcome.portFound ? { containment: outcome.containment, portFound: outcome.portFound } : { containment: outcome.containment }),
        );
      },
      switched: (outcome) => log(switchLine(outcome)),
    });
  }
}

/** A failed start as the deploy's failure (code and message). */
export function stepFailureOf(outcome: EdgeStartFailure, edgeUrl: string): StepFailure {
  switch (outcome.kind) {
    case 'unreachable':
      return new StepFailure('release_failed', `the edge at ${edgeUrl} did not answer: ${outcome.message}`);
    case 'sandbox_unavailable':
      return new StepFailure('sandbox_unavailable', `the edge cannot sandbox the application, so nothing of it ran: ${outcome.error ?? 'no reason given'}`);
    case 'unhealthy':
      return new StepFailure(
        'release_unhealthy',
        outcome.error ?? 'the new release did not become healthy; the previous release keeps serving',
        outcome.logTail ? `${outcome.logTail}\n` : '',
      );
    case 'not_found':
    case 'refused':
      return new StepFailure('release_failed', `the edge refused the release (${outcome.status}): ${outcome.error ?? 'no reason given'}`);
  }
}

/** Not fatal: an edge that did not switch now does on the routes message that follows the commit. */
function switchLine(outcome: EdgeSwitchOutcome): string {
  if (outcome.switched) return 'the edge serves the new release';
  if ('status' in outcome) return `the edge did not switch yet (${outcome.status}); it will on the routes message`;
  return `the edge did not answer the switch (${outcome.message}); it will on the routes message`;
}
