import { useCallback, useState } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, Backup, DatabaseBackups, DatabaseInfo } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Loading, OnceSecret } from '../components/ui.js';
import { formatBytes, formatMoment, formatWhen } from '../format.js';
import { BackupsCard } from './database-backups.js';
import { RESTORE_TO_BACKUP_ID, RestoreForm } from './database-restore-form.js';
import { RecentRestores } from './database-restores.js';

export function DatabaseTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/database`;
  const info = useResource<DatabaseInfo>(path);
  // Asked once the database is known to exist (before, it is a 404). Until the platform's first
  // base backup there is nothing to restore to: look again every few seconds.
  const backups = useResource<DatabaseBackups>(info.data?.database ? `${path}/backups` : null, { pollMs: 5000, keepPolling: (b) => b.pointInTime === null });
  const refresh = useCallback(async () => {
    await Promise.all([backups.reload(), info.reload()]);
  }, [backups.reload, info.reload]);
  const [backupId, setBackupId] = useState<string | null>(null);
  const pick = (backup: Backup) => {
    setBackupId(backup.id);
    // After the form has switched to its list of backups: there, ready to restore.
    window.requestAnimationFrame(() => document.getElementById(RESTORE_TO_BACKUP_ID)?.focus());
  };
  const [connection, setConnection] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const reveal = async () => {
    setBusy(true);
    setError(null);
    try {
      setConnection((await api.post<{ connectionString: string }>(`/applications/${app.id}/database/connection-string`)).connectionString);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  if (info.loading) return <Loading what="the database" />;
  if (!info.data) return <ErrorNotice error={info.error} />;
  const { database, allowance } = info.data;
  const failedAt = backups.data?.health.failedAt;
  return (
    <div className="stack">
      {failedAt ? (
        <div className="notice notice-warning" role="status">
          <strong>The platform’s last backup failed</strong> at {formatMoment(failedAt)} — the operator sees why in the platform’s log.
        </div>
      ) : null}
      <div className="card">
        <h2>Allowance</h2>
        <p>
          Your plan includes {allowance.allowed} application database{allowance.allowed === 1 ? '' : 's'}; you use {allowance.used}.
        </p>
        <meter min={0} max={allowance.allowed} value={allowance.used} aria-label="Databases used" />
      </div>
      {database ? (
        <div className="card">
          <h2>{app.name}’s database</h2>
          <dl className="facts">
            <dt>Name</dt>
            <dd className="mono">{database.name}</dd>
            <dt>Size</dt>
            <dd>{database.sizeBytes === null ? 'not measured' : formatBytes(database.sizeBytes)}</dd>
            <dt>Created</dt>
            <dd>{formatWhen(database.createdAt)}</dd>
          </dl>
          <ErrorNotice error={error} />
          {connection ? (
            <OnceSecret title="The connection string holds the database password." value={connection} onDone={() => setConnection(null)} />
          ) : (
            <Button type="button" variant="secondary" busy={busy} onClick={() => void reveal()}>
              Reveal connection string
            </Button>
          )}
        </div>
      ) : (
        <div className="empty card">
          <h2>No database yet</h2>
          <p>
            An application gets its own Postgres database when sign-in is switched on for it. It counts against your plan’s allowance and holds the{' '}
            <code>service_auth</code> schema with your users.
          </p>
        </div>
      )}
      {database ? <ErrorNotice error={backups.data ? null : backups.error} /> : null}
      {database && backups.data ? (
        <>
          <BackupsCard path={path} info={backups.data} onChange={backups.reload} onPick={pick} />
          {backups.data.pointInTime ? (
            <RestoreForm
              app={app}
              path={path}
              window={backups.data.pointInTime}
              backups={backups.data.backups}
              backupId={backupId}
              onBackupId={setBackupId}
              onQueued={backups.reload}
            />
          ) : null}
          <RecentRestores app={app} path={path} restores={backups.data.restores} onFinished={refresh} />
        </>
      ) : null}
    </div>
  );
}
