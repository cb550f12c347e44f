import { useEffect } from 'react';
import type { ApplicationDetails, Restore } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { StatusBadge } from '../components/ui.js';
import { formatBytes, formatDuration, formatMoment, formatWhen, localizeTimes } from '../format.js';
import { isActive } from '../restore-window.js';

/** The latest restores; one that is queued or running is followed every second until it ends. */
export function RecentRestores({
  app,
  path,
  restores,
  onFinished,
}: {
  app: ApplicationDetails;
  path: string;
  restores: Restore[];
  onFinished(): Promise<void>;
}) {
  if (restores.length === 0) return null;
  return (
    <div className="card">
      <h2 id="restores-heading">Recent restores</h2>
      <ul className="plain-list restore-list" aria-labelledby="restores-heading">
        {restores.map((r) => (
          <RestoreItem key={r.id} app={app} path={path} restore={r} onFinished={onFinished} />
        ))}
      </ul>
    </div>
  );
}

function RestoreItem({ app, path, restore, onFinished }: { app: ApplicationDetails; path: string; restore: Restore; onFinished(): Promise<void> }) {
  const followed = useResource<Restore>(isActive(restore.status) ? `${path}/restores/${restore.id}` : null, {
    pollMs: 1000,
    keepPolling: (r) => isActive(r.status),
  });
  const r = followed.data ?? restore;
  // The list (and the database's size) only change when a restore ends: reload them then.
  const ended = isActive(restore.status) && !isActive(r.status);
  useEffect(() => {
    if (ended) void onFinished();
  }, [ended, onFinished]);
  return (
    <li className="restore-item" aria-label={`Restore to ${formatMoment(r.to)}`}>
      <div className="restore-head">
        <StatusBadge status={r.status} />
        <span>
          To <strong>{formatMoment(r.to)}</strong>, {r.into === 'new' ? 'into a new database' : 'in place'}
        </span>
        <span className="muted">
          asked {formatWhen(r.createdAt)}
          {r.finishedAt ? `, took ${formatDuration(new Date(r.finishedAt).getTime() - new Date(r.createdAt).getTime())}` : ''}
        </span>
      </div>
      <RestoreOutcome app={app} restore={r} />
    </li>
  );
}

function RestoreOutcome({ app, restore: r }: { app: ApplicationDetails; restore: Restore }) {
  const size = r.sizeBytes === null ? '' : ` (${formatBytes(r.sizeBytes)})`;
  switch (r.status) {
    case 'queued':
      return (
        <p className="muted live-dot" aria-live="polite">
          Waiting for the backup service…
        </p>
      );
    case 'running':
      return (
        <p className="live-dot" aria-live="polite" data-testid="restore-step">
          {sentence(r.step ?? 'working')}…
        </p>
      );
    case 'succeeded':
      return r.into === 'new' ? (
        <p>
          Restored as <span className="mono">{r.databaseName}</span>
          {size}, beside the current database. It has the same user and password: use the connection string with this database name.
        </p>
      ) : (
        <p>
          {app.name} now sees its data as of {formatMoment(r.to)}
          {size}. The database it replaced is kept as <span className="mono">{r.keptDatabase}</span>.
        </p>
      );
    case 'failed':
      return (
        <p className="notice notice-danger">
          The restore failed{r.step && !NOT_WORK.has(r.step) ? ` while ${r.step}` : ''}: {r.error ? localizeTimes(r.error) : 'no reason was recorded.'}
        </p>
      );
  }
}

/** Steps that are not work in progress ("failed while queued" says nothing). */
const NOT_WORK = new Set(['queued', 'starting', 'done']);
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
