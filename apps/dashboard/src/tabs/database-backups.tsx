import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { Backup, DatabaseBackups } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { Button, ErrorNotice, Field } from '../components/ui.js';
import { formatBytes, formatMoment, formatWhen } from '../format.js';
import { isRestorable } from '../restore-window.js';

const SHOWN = 10;

/**
 * What the database can be restored to: the window in words, a button to mark a restore point
 * (before a risky migration, say), and the backups and restore points, each one click from the
 * restore form.
 */
export function BackupsCard({
  path,
  info,
  onChange,
  onPick,
}: {
  path: string;
  info: DatabaseBackups;
  onChange(): Promise<void>;
  onPick(backup: Backup): void;
}) {
  const [label, setLabel] = useState('');
  const [marked, setMarked] = useState<Backup | null>(null);
  const [showAll, setShowAll] = useState(false);
  const action = useAction(onChange);
  const now = Date.now();
  const { pointInTime, windowDays, backups, health } = info;
  const mark = (event: FormEvent) => {
    event.preventDefault();
    setMarked(null);
    void action.run(async () => {
      setMarked(await api.post<Backup>(`${path}/backups`, label.trim() ? { label: label.trim() } : {}));
      setLabel('');
    });
  };
  const shown = showAll ? backups : backups.slice(0, SHOWN);
  return (
    <div className="card" aria-labelledby="backups-heading">
      <h2 id="backups-heading">Backups</h2>
      {pointInTime ? (
        <p>
          Restorable to any moment since <strong>{formatMoment(pointInTime.earliest)}</strong> (your plan: {windowDays} day{windowDays === 1 ? '' : 's'}).
          {health.lastBackupAt ? (
            <span className="muted"> Last full backup {formatWhen(health.lastBackupAt)}; every change since is kept as it happens.</span>
          ) : null}
        </p>
      ) : (
        <p className="muted">
          No backup to restore from yet. The platform takes its first backup when it starts; from then on the database can be restored to any moment. This page
          checks again every few seconds.
        </p>
      )}
      <form className="inline-form" onSubmit={mark} aria-label="Mark a restore point">
        <Field
          label="Label (optional)"
          name="restore-point-label"
          maxLength={100}
          placeholder="before the orders migration"
          autoComplete="off"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
        />
        <Button type="submit" variant="secondary" busy={action.busy !== null}>
          Mark a restore point
        </Button>
      </form>
      <ErrorNotice error={action.error} />
      {marked ? (
        <p className="notice notice-success" role="status">
          Restore point “{marked.label}” marked at {formatMoment(marked.at)}.
          {isRestorable(marked.at, pointInTime, now) ? ' Restore to it from its row below, now or later.' : ''}
        </p>
      ) : null}
      {backups.length > 0 ? (
        <div className="table-wrap">
          <table className="backup-table">
            <caption className="visually-hidden">Backups and restore points</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Taken</th>
                <th scope="col">Size or label</th>
                <th scope="col">
                  <span className="visually-hidden">Restore</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((b) => (
                <BackupRow key={b.id} backup={b} restorable={isRestorable(b.at, pointInTime, now)} onPick={() => onPick(b)} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {backups.length > SHOWN ? (
        <Button type="button" variant="ghost" onClick={() => setShowAll(!showAll)}>
          {showAll ? `Show the newest ${SHOWN}` : `Show all ${backups.length}`}
        </Button>
      ) : null}
    </div>
  );
}

function BackupRow({ backup: b, restorable, onPick }: { backup: Backup; restorable: boolean; onPick(): void }) {
  const name = b.kind === 'base' ? 'Full backup' : 'Restore point';
  return (
    <tr>
      <td data-label="Kind">
        <span className={`badge ${b.kind === 'base' ? '' : 'badge-progress'}`}>{name}</span>
      </td>
      <td data-label="Taken">
        <time dateTime={b.at}>{formatMoment(b.at)}</time> <span className="muted">({formatWhen(b.at)})</span>
      </td>
      <td data-label={b.kind === 'base' ? 'Size' : 'Label'}>
        {b.kind === 'base' ? (b.sizeBytes === null ? '—' : formatBytes(b.sizeBytes)) : `“${b.label ?? 'restore point'}”`}
      </td>
      <td className="row-actions">
        {restorable ? (
          <Button type="button" variant="secondary" onClick={onPick} aria-label={`Restore to the ${name.toLowerCase()} of ${formatMoment(b.at)}`}>
            Restore to this…
          </Button>
        ) : (
          <span className="muted">outside the window</span>
        )}
      </td>
    </tr>
  );
}
