import type pg from 'pg';

const STEP_NAMES = ['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release'] as const;

type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

/**
 * Moves a deployment row on exactly as the build worker does (its columns, its step shape),
 * because this branch has no build worker yet: `upTo` steps succeeded (1 s each), then the
 * `current` step in `currentStatus`, the rest pending.
 */
export function stepsUpTo(done: number, current?: { status: StepStatus; log?: string }, t0 = Date.now() - 60_000) {
  return STEP_NAMES.map((name, i) => {
    const startedAt = new Date(t0 + i * 1000).toISOString();
    const finishedAt = new Date(t0 + i * 1000 + 1000 + i * 100).toISOString();
    if (i < done) return { name, status: 'succeeded', startedAt, finishedAt, durationMs: 1000 + i * 100, log: `${name} ok\n` };
    if (i === done && current) {
      const finished = current.status !== 'running';
      return {
        name,
        status: current.status,
        startedAt,
        finishedAt: finished ? finishedAt : null,
        durationMs: finished ? 1000 + i * 100 : null,
        log: current.log ?? '',
      };
    }
    return { name, status: 'pending', startedAt: null, finishedAt: null, durationMs: null, log: '' };
  });
}

export interface TaskPatch {
  status: 'building' | 'releasing' | 'succeeded' | 'failed';
  steps: unknown[];
  warnings?: unknown[];
  hazards?: unknown[];
  error?: { code: string; message: string; step: string | null };
}

export async function advanceTask(sql: pg.Pool, taskId: string, patch: TaskPatch): Promise<void> {
  const finished = patch.status === 'succeeded' || patch.status === 'failed';
  const { rowCount } = await sql.query(
    `UPDATE deployments SET status = $2, steps = $3::jsonb, warnings = $4::jsonb, hazards = $5::jsonb, error = $6::jsonb,
       started_at = COALESCE(started_at, now()), finished_at = CASE WHEN $7 THEN now() ELSE NULL END, updated_at = now()
     WHERE id = $1`,
    [
      taskId,
      patch.status,
      JSON.stringify(patch.steps),
      JSON.stringify(patch.warnings ?? []),
      JSON.stringify(patch.hazards ?? []),
      patch.error ? JSON.stringify(patch.error) : null,
      finished,
    ],
  );
  if (rowCount !== 1) throw new Error(`no deployment ${taskId}`);
}

/** The task id of the application's latest deployment, once the CLI's upload was accepted. */
export async function latestTaskId(sql: pg.Pool, applicationId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM deployments WHERE application_id = $1 ORDER BY created_at DESC LIMIT 1', [applicationId]);
  return rows[0]?.id;
}
