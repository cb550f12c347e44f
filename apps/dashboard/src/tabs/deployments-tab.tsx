import { useState } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, ApplicationStorageView, DeploymentRow, Release } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { DeployCommands } from '../components/deploy-commands.js';
import { StorageCard } from '../components/storage-card.js';
import { Button, ErrorNotice, Loading, StatusBadge } from '../components/ui.js';
import { formatDuration, formatWhen, isTerminal } from '../format.js';
import { Link } from '../router.js';

export function DeploymentsTab({ app }: { app: ApplicationDetails }) {
  const list = useResource<{ deployments: DeploymentRow[] }>(`/applications/${app.id}/deployments`, {
    pollMs: 3000,
    keepPolling: (d) => d.deployments.some((row) => !isTerminal(row.status)),
  });
  const releases = useResource<{ releases: Release[] }>(`/applications/${app.id}/releases`);
  const storage = useResource<ApplicationStorageView>(`/applications/${app.id}/storage`);
  const [rollbackError, setRollbackError] = useState<unknown>(null);
  const [switching, setSwitching] = useState<string | null>(null);
  const makeLive = async (release: Release) => {
    if (!window.confirm(`Make release ${release.id.slice(0, 8)} live again? It takes traffic without a rebuild.`)) return;
    setSwitching(release.id);
    setRollbackError(null);
    try {
      await api.post(`/applications/${app.id}/releases/${release.id}/live`);
      await releases.reload();
    } catch (error) {
      setRollbackError(error);
    } finally {
      setSwitching(null);
    }
  };
  const remove = async (release: Release) => {
    if (!window.confirm(`Delete release ${release.id.slice(0, 8)}? Its artifact is deleted and it can no longer be made live.`)) return;
    setSwitching(release.id);
    setRollbackError(null);
    try {
      await api.delete(`/applications/${app.id}/releases/${release.id}`);
      await Promise.all([releases.reload(), storage.reload()]);
    } catch (error) {
      setRollbackError(error);
    } finally {
      setSwitching(null);
    }
  };
  if (list.loading) return <Loading what="deployments" />;
  const rows = list.data?.deployments ?? [];
  return (
    <div className="stack">
      <ErrorNotice error={list.error} />
      {rows.length === 0 ? (
        <div className="empty card">
          <h2>Deploy {app.name} for the first time</h2>
          <DeployCommands app={app} />
        </div>
      ) : (
        <div className="table-wrap card">
          <table>
            <caption className="visually-hidden">Deployments</caption>
            <thead>
              <tr>
                <th scope="col">Deployment</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Findings</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td data-label="Deployment">
                    <Link to={`/apps/${app.id}/deployments/${d.id}`} className="mono">
                      {d.id.slice(0, 8)}
                    </Link>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={d.status} />
                  </td>
                  <td data-label="Started">{formatWhen(d.createdAt)}</td>
                  <td data-label="Duration">
                    {d.startedAt && d.finishedAt ? formatDuration(new Date(d.finishedAt).getTime() - new Date(d.startedAt).getTime()) : '—'}
                  </td>
                  <td data-label="Findings">
                    {d.hazardCount ? (
                      <span className="count count-danger">
                        {d.hazardCount} hazard{d.hazardCount === 1 ? '' : 's'}
                      </span>
                    ) : null}
                    {d.warningCount ? (
                      <span className="count count-warning">
                        {d.warningCount} warning{d.warningCount === 1 ? '' : 's'}
                      </span>
                    ) : null}
                    {!d.hazardCount && !d.warningCount ? <span className="muted">none</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {releases.data && releases.data.releases.length > 0 ? (
        <div className="card">
          <h2>Releases</h2>
          <ErrorNotice error={rollbackError} />
          <ul className="plain-list release-list">
            {releases.data.releases.map((r) => (
              <li key={r.id}>
                <span className="mono">{r.id.slice(0, 8)}</span> <span className="muted">{r.kind}</span>{' '}
                <span className="muted">{formatWhen(r.createdAt)}</span>{' '}
                {r.live ? (
                  <StatusBadge status="live" />
                ) : r.preview ? (
                  <span className="badge" title="Built by a preview, with its secrets: deploy without --preview to make it production">
                    preview {r.preview}
                  </span>
                ) : (
                  <>
                    <Button variant="secondary" busy={switching === r.id} disabled={switching !== null} onClick={() => void makeLive(r)}>
                      {switching === r.id ? 'Working…' : 'Make live'}
                    </Button>{' '}
                    <Button variant="danger" disabled={switching !== null} onClick={() => void remove(r)}>
                      Delete
                    </Button>
                  </>
                )}{' '}
                <Link to={`/apps/${app.id}/deployments/${r.deploymentId}`}>deployment</Link>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <StorageCard storage={storage} />
    </div>
  );
}
