import { useState } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, DatabaseInfo } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Loading, OnceSecret } from '../components/ui.js';
import { formatBytes, formatWhen } from '../format.js';

export function DatabaseTab({ app }: { app: ApplicationDetails }) {
  const info = useResource<DatabaseInfo>(`/applications/${app.id}/database`);
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
  return (
    <div className="stack">
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
            An application gets its own Postgres database when sign-in is switched on for it. It counts against your plan’s allowance and holds the <code>service_auth</code> schema with your users.
          </p>
        </div>
      )}
    </div>
  );
}
