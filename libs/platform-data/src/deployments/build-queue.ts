import type { ApplicationId, DeploymentId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

/** How the build queue orders deployments (`DEPLOY_QUEUE_ORDER` on the worker). */
export type QueueOrder = 'fair' | 'fifo';

export interface StartRules {
  /** `fair`: round-robin across owners with a per-owner cap; `fifo`: whichever job comes (measurement only). */
  order: QueueOrder;
  /** Builds one owner may have running at once, platform-wide. */
  perOwner: number;
  /** The attempt's deadline, counted from now (its start), not from when it was queued. */
  deadlineMs: number;
}

export type StartDecision =
  /** The attempt is this worker's: run it, fenced by `attempt`, until `deadlineAt`. */
  | { kind: 'started'; attempt: number; sourceKey: string | null; rootDirectory: string | null; deadlineAt: Date; queuedMs: number }
  /** Another owner's deployment comes first (or this owner is at its cap): try again shortly. */
  | { kind: 'wait'; reason: string }
  /** Finished or unknown: nothing to do. */
  | { kind: 'gone' };

/** One lock for every pick on the platform: picks are rare (one per deployment) and short. */
const PICK_LOCK = "hashtext('slipway:build-queue:pick')";

interface OwnerTurn {
  owner_id: string;
  running: number;
}

/**
 * The owners that have a deployment waiting, in the order their turn comes: fewest builds running
 * first, then the one served least recently (its latest build start; never served first), then
 * the one waiting longest. The first eligible owner's deployments may start; the others wait.
 * "Served" looks at the last day of starts, which keeps the scan bounded by recent history.
 */
const TURNS = `
  WITH waiting AS (
    SELECT a.owner_id, min(d.created_at) AS oldest
      FROM deployments d JOIN applications a ON a.id = d.application_id
     WHERE d.status = 'queued'
     GROUP BY a.owner_id)
  SELECT w.owner_id::text,
         (SELECT count(*) FROM deployments d JOIN applications a ON a.id = d.application_id
           WHERE a.owner_id = w.owner_id AND d.status IN ('building', 'releasing'))::int AS running,
         (SELECT max(d.started_at) FROM deployments d JOIN applications a ON a.id = d.application_id
           WHERE a.owner_id = w.owner_id AND d.created_at > now() - interval '1 day') AS last_started
    FROM waiting w
   ORDER BY running, last_started ASC NULLS FIRST, w.oldest, w.owner_id`;

/**
 * Which deployment may start, decided in Postgres so it holds across any number of worker
 * processes: the decision and the claim happen in one transaction under one transaction-scoped
 * advisory lock, so two workers never both see "this owner is under its cap" and both start
 * (no read-then-write across transactions). A deployment that is already building (a stalled
 * attempt handed over, a worker restarted) continues without waiting its turn again.
 */
export class BuildQueue {
  constructor(private readonly platform: PlatformInfrastructure) {}

  async tryStart(applicationId: ApplicationId, deploymentId: DeploymentId, rules: StartRules): Promise<StartDecision> {
    return this.platform.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${PICK_LOCK})`);
        const rows = await tx.$queryRaw<{ status: string; owner_id: string }[]>`
        SELECT d.status::text, a.owner_id::text FROM deployments d JOIN applications a ON a.id = d.application_id
         WHERE d.id = ${deploymentId}::uuid AND d.application_id = ${applicationId}::uuid AND d.status IN ('queued', 'building', 'releasing')`;
        const row = rows[0];
        if (!row) return { kind: 'gone' } as const;
        if (row.status === 'queued' && rules.order === 'fair') {
          const turns = await tx.$queryRawUnsafe<OwnerTurn[]>(TURNS);
          const mine = turns.find((t) => t.owner_id === row.owner_id);
          if (mine && mine.running >= rules.perOwner)
            return { kind: 'wait', reason: `its owner has ${mine.running} build(s) running (at most ${rules.perOwner} per owner)` } as const;
          const first = turns.find((t) => t.running < rules.perOwner);
          if (first && first.owner_id !== row.owner_id) return { kind: 'wait', reason: 'another owner has waited longer since its last build' } as const;
        }
        const started = await tx.$queryRaw<
          { attempts: number; source_key: string | null; root_directory: string | null; deadline_at: Date; queued_ms: number }[]
        >`
        UPDATE deployments SET attempts = attempts + 1, status = 'building', started_at = COALESCE(started_at, now()),
               deadline_at = now() + (${rules.deadlineMs}::int * interval '1 millisecond'), updated_at = now()
         WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('queued', 'building', 'releasing')
        RETURNING attempts, source_key, root_directory, deadline_at, (extract(epoch FROM (started_at - created_at)) * 1000)::float8 AS queued_ms`;
        const claim = started[0]!;
        return {
          kind: 'started',
          attempt: claim.attempts,
          sourceKey: claim.source_key,
          rootDirectory: claim.root_directory,
          deadlineAt: claim.deadline_at,
          queuedMs: Number(claim.queued_ms),
        } as const;
      },
      { maxWait: 10_000, timeout: 20_000 },
    );
  }

  /** Whether `attempt` still owns the deployment (not failed by the reconciler, not taken by another attempt). */
  async stillRunning(applicationId: ApplicationId, deploymentId: DeploymentId, attempt: number): Promise<boolean> {
    const count = await this.platform.prisma.deployment.count({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: ['building', 'releasing'] } },
    });
    return count === 1;
  }
}
