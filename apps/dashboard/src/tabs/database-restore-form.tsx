import { useState, type FormEvent, type ReactNode } from 'react';
import { api, describeError } from '../api/client.js';
import type { ApplicationDetails, Backup, Restore } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { Button, Field } from '../components/ui.js';
import { formatMoment, localizeTimes } from '../format.js';
import { defaultMoment, fromLocalInput, isRestorable, momentBounds, momentProblem, toLocalInput, type RestoreWindow } from '../restore-window.js';

export const RESTORE_TO_BACKUP_ID = 'restore-to-backup';
type Into = Restore['into'];

/**
 * Restores the database to a moment or to one of the backups, into a new database beside it or in
 * place. In place replaces what the application sees, so it asks for the application's name first.
 */
export function RestoreForm(props: {
  app: ApplicationDetails;
  path: string;
  window: RestoreWindow;
  backups: Backup[];
  backupId: string | null;
  onBackupId(id: string | null): void;
  onQueued(): Promise<void>;
}) {
  const { app, window, backupId, onBackupId } = props;
  const [moment, setMoment] = useState(() => toLocalInput(defaultMoment(window, Date.now())));
  const [into, setInto] = useState<Into>('new');
  const [confirm, setConfirm] = useState('');
  const [queued, setQueued] = useState(false);
  const action = useAction(props.onQueued);
  const now = Date.now();
  const bounds = momentBounds(window, now);
  const choices = props.backups.filter((b) => isRestorable(b.at, window, now));
  const backup = props.backups.find((b) => b.id === backupId) ?? null;
  const at = backup ? new Date(backup.at) : fromLocalInput(moment);
  const problem = backup ? null : momentProblem(at, window, now);
  const confirmed = into === 'new' || confirm.trim() === app.name;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!at || problem || !confirmed) return;
    setQueued(false);
    void action.run(async () => {
      await api.post<Restore>(`${props.path}/restores`, { to: backup ? backup.id : at.toISOString(), into });
      setConfirm('');
      setQueued(true);
    });
  };
  return (
    <form className="card restore-form" onSubmit={submit} aria-labelledby="restore-heading">
      <h2 id="restore-heading">Restore</h2>
      <fieldset>
        <legend>Restore to</legend>
        <label className="checkbox">
          <input type="radio" name="restore-source" checked={!backup} onChange={() => onBackupId(null)} /> A moment
        </label>
        {!backup ? (
          <Field
            label="Date and time (your time zone)"
            name="restore-moment"
            type="datetime-local"
            required
            min={toLocalInput(bounds.min)}
            max={toLocalInput(bounds.max)}
            value={moment}
            onChange={(e) => setMoment(e.target.value)}
            error={problem}
            hint={`From ${formatMoment(bounds.min.toISOString())} to now.`}
          />
        ) : null}
        <label className="checkbox">
          <input
            type="radio"
            name="restore-source"
            checked={backup !== null}
            disabled={choices.length === 0}
            onChange={() => onBackupId(choices[0]?.id ?? null)}
          />{' '}
          A backup or restore point
        </label>
        {backup ? (
          <div className="field field-wide">
            <label htmlFor={RESTORE_TO_BACKUP_ID}>Which backup or restore point</label>
            <select id={RESTORE_TO_BACKUP_ID} value={backup.id} onChange={(e) => onBackupId(e.target.value)}>
              {choices.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.kind === 'base' ? 'Full backup' : `Restore point “${b.label ?? 'restore point'}”`} — {formatMoment(b.at)}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Into</legend>
        <IntoChoice value="new" into={into} onInto={setInto} title="A new database">
          Restored beside the current one under a new name, with the same user and password. Nothing changes for {app.name}: look around, copy back what you
          need.
        </IntoChoice>
        <IntoChoice value="in_place" into={into} onInto={setInto} title="In place">
          {app.name} sees the restored data under its own DATABASE_URL; its queries wait a moment during the swap. The current database is kept under another
          name.
        </IntoChoice>
      </fieldset>
      {into === 'in_place' ? (
        <div className="notice notice-warning">
          <p>
            Everything written after {at ? formatMoment(at.toISOString()) : 'that moment'} disappears from what {app.name} sees (it stays in the kept database).
          </p>
          <Field
            label={`Type ${app.name} to confirm`}
            name="restore-confirm"
            autoComplete="off"
            spellCheck={false}
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
          />
        </div>
      ) : null}
      {action.error ? (
        <div className="notice notice-danger" role="alert">
          {localizeTimes(describeError(action.error))}
        </div>
      ) : null}
      {queued ? (
        <p className="notice notice-success" role="status">
          Restore started. Follow it under Recent restores.
        </p>
      ) : null}
      <Button
        type="submit"
        variant={into === 'in_place' ? 'danger' : 'primary'}
        busy={action.busy !== null}
        disabled={action.busy !== null || !at || problem !== null || !confirmed}
      >
        {into === 'in_place' ? `Restore ${app.name}’s database in place` : 'Restore into a new database'}
      </Button>
    </form>
  );
}

function IntoChoice({ value, into, onInto, title, children }: { value: Into; into: Into; onInto(value: Into): void; title: string; children: ReactNode }) {
  return (
    <label className="choice">
      <input type="radio" name="restore-into" value={value} checked={into === value} onChange={() => onInto(value)} />
      <span>
        <strong>{title}</strong>
        <span className="muted choice-hint">{children}</span>
      </span>
    </label>
  );
}
