import { slugify } from '@slipway/contract';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { ApplicationSummary } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Field, Loading, StatusBadge } from '../components/ui.js';
import { formatWhen } from '../format.js';
import { Link, useRouter } from '../router.js';

export function ApplicationsPage() {
  const apps = useResource<{ applications: ApplicationSummary[] }>('/applications');
  const list = apps.data?.applications ?? [];
  return (
    <div className="stack">
      <div className="page-head">
        <div>
          <h1>Applications</h1>
          <p className="muted">Each application has its own address, keys, secrets and deployments.</p>
        </div>
      </div>
      <CreateApplication />
      <ErrorNotice error={apps.error} />
      {apps.loading ? <Loading what="applications" /> : null}
      {!apps.loading && list.length === 0 && !apps.error ? (
        <div className="empty card">
          <h2>No applications yet</h2>
          <p>Name your first application above. You will get its address and an API key to deploy with.</p>
        </div>
      ) : null}
      {list.length > 0 ? (
        <ul className="app-list" aria-label="Your applications">
          {list.map((app) => (
            <li key={app.id} className="card app-item">
              <div>
                <h2 className="app-name">
                  <Link to={`/apps/${app.id}`}>{app.name}</Link>
                </h2>
                <p className="muted mono">{app.url.replace(/^https?:\/\//, '')}</p>
              </div>
              <div className="app-meta">
                {app.latestDeployment ? (
                  <>
                    <StatusBadge status={app.latestDeployment.status} />
                    <span className="muted">{formatWhen(app.latestDeployment.createdAt)}</span>
                  </>
                ) : (
                  <span className="muted">Not deployed yet</span>
                )}
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function CreateApplication() {
  const { navigate } = useRouter();
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const app = await api.post<ApplicationSummary>('/applications', { name });
      navigate(`/apps/${app.id}`);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <form className="card create-app" onSubmit={(e) => void submit(e)} aria-labelledby="create-app-title">
      <h2 id="create-app-title">New application</h2>
      <ErrorNotice error={error} />
      <div className="inline-form">
        <Field
          label="Name"
          name="name"
          required
          maxLength={100}
          placeholder="My Shop"
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint={
            name.trim() ? (
              <>
                Its address will start with <code>{slugify(name)}</code> (a number is added if that is taken).
              </>
            ) : (
              'You can use any name; the address is made from it.'
            )
          }
        />
        <Button type="submit" busy={busy}>
          Create application
        </Button>
      </div>
    </form>
  );
}
