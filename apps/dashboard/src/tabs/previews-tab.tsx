import { api } from '../api/client.js';
import type { ApplicationDetails } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Loading } from '../components/ui.js';

interface Preview {
  name: string;
  url: string;
  expiresAt: string;
  createdAt: string;
  liveReleaseId: string | null;
}

/** The application's previews: each at its own address, with the preview values of the secrets, until it expires. */
export function PreviewsTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/previews`;
  const list = useResource<{ previews: Preview[]; limit: number; ttlHours: number }>(path);
  const action = useAction(list.reload);
  const busy = action.busy !== null;
  const remove = (p: Preview) => {
    if (window.confirm(`Delete the preview ${p.name}? ${p.url} stops answering and its releases are removed.`))
      void action.run(() => api.delete(`${path}/${encodeURIComponent(p.name)}`), p.name);
  };
  const previews = list.data?.previews ?? [];
  const days = list.data ? Math.round((list.data.ttlHours / 24) * 10) / 10 : null;
  return (
    <div className="stack">
      <div className="card">
        <p className="muted">
          A preview is built like any deploy and served at its own address, with the values of the secrets set for previews; production keeps serving what it
          does.
          {days !== null ? ` Each expires ${days} day${days === 1 ? '' : 's'} after its last deploy; your plan allows ${list.data!.limit} at once.` : ''}
        </p>
        <pre className="code-inline">
          <code>{`slipway deploy --preview <name>        # → ${app.url.replace(/^(https?:\/\/[^.]+)/, '$1--<name>')}\nslipway secrets set NAME=value --preview`}</code>
        </pre>
      </div>
      <ErrorNotice error={action.error ?? list.error} />
      {list.loading ? <Loading what="previews" /> : null}
      {!list.loading && previews.length === 0 ? (
        <div className="empty card">
          <p>No previews.</p>
        </div>
      ) : null}
      {previews.length > 0 ? (
        <ul className="card plain-list secret-list" aria-label="Previews">
          {previews.map((p) => (
            <li key={p.name}>
              <span className="mono">{p.name}</span>
              {p.liveReleaseId ? (
                <a href={p.url} target="_blank" rel="noreferrer">
                  {p.url}
                </a>
              ) : (
                <span className="muted">nothing released yet</span>
              )}
              <span className="muted">expires {new Date(p.expiresAt).toLocaleString()}</span>
              <Button
                type="button"
                variant="danger"
                disabled={busy}
                busy={action.busy === p.name}
                onClick={() => remove(p)}
                aria-label={`Delete preview ${p.name}`}
              >
                Delete
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
