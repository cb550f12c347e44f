import type { EdgeHandoff, EdgeStartOutcome, EdgeStarted, EdgeSwitchOutcome, RoutesMessage } from '@slipway/messaging';
import type { ApplicationId, DeploymentsRepository, ReleaseId } from '@slipway/platform-data';
import { ReleaseNotFoundError } from './release-switch.js';

/** A start the edge did not find healthy (the live release keeps serving). */
export type EdgeStartFailure = Exclude<EdgeStartOutcome, EdgeStarted>;

/** What the caller of the use case decides: whether the edge starts the release, its errors, its log. */
export interface GoLiveHow {
  /** Whether the edge starts the release first (the worker does not for a static release: the switch serves its files). */
  start: boolean;
  /** The caller's own error for a start that failed (a deploy's `StepFailure`, an API's `ApiException`): thrown. */
  refused(outcome: EdgeStartFailure): Error;
  /** After a healthy start (null: not started), before the switch: what the caller does with it. */
  started?(outcome: EdgeStarted | null): Promise<void> | void;
  /** The switch's answer, to log; not switched is not fatal (the routes message after the commit switches the edge). */
  switched?(outcome: EdgeSwitchOutcome): void;
}

/**
 * Making a release live, the one protocol for a deploy, a rollback and a promote:
 * 1. the edge starts it next to the live release and reports it healthy (else the caller's error,
 *    and the live release keeps serving);
 * 2. the edge is asked to serve it now, so it is never reported live before it is served;
 * 3. it is committed as live in the database, then every edge is told on the routes channel (told
 *    even when the commit did not happen: an edge that switched goes back to the database's live release).
 *
 * A deploy runs 1–2 (`prepare`) in its release step and 3 (`commit`) once the step is recorded, the
 * commit fenced by its attempt; a rollback or promote runs the three (`run`).
 */
export class ReleaseGoLive {
  constructor(
    private readonly edge: EdgeHandoff,
    /** Publishes on the routes channel (libs/messaging `publishRoutesChanged`); rejects when it cannot. */
    private readonly announce: (message: RoutesMessage) => Promise<void>,
  ) {}

  /** Steps 1 and 2. Throws what `how.refused` makes of a failed start. */
  async prepare(applicationId: ApplicationId, releaseId: ReleaseId, how: GoLiveHow): Promise<void> {
    let started: EdgeStarted | null = null;
    if (how.start) {
      const outcome = await this.edge.start(releaseId);
      if (outcome.kind !== 'healthy') throw how.refused(outcome);
      started = outcome;
    }
    await how.started?.(started);
    const switched = await this.edge.switchTo(applicationId, releaseId);
    how.switched?.(switched);
  }

  /** Step 3: `commit` writes the database (false: it did not, e.g. a lost attempt); the edges are told either way. */
  async commit(applicationId: ApplicationId, commit: () => Promise<boolean>): Promise<boolean> {
    const committed = await commit();
    await this.announce({ applicationId });
    return committed;
  }

  /** The three steps for a release that exists already (rollback, promote). Throws `ReleaseNotFoundError` when the application has no such release. */
  async run(deployments: DeploymentsRepository, applicationId: ApplicationId, releaseId: ReleaseId, how: GoLiveHow): Promise<void> {
    await this.prepare(applicationId, releaseId, how);
    if (!(await this.commit(applicationId, () => deployments.releases.switchLive(applicationId, releaseId)))) {
      throw new ReleaseNotFoundError(`application ${applicationId} has no release ${releaseId}`);
    }
  }
}
