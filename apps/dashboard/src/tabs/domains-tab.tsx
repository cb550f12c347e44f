import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, Domain } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Field, Loading } from '../components/ui.js';

export function DomainsTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/domains`;
  const list = useResource<{ domains: Domain[] }>(path);
  const [hostname, setHostname] = useState('');
  const action = useAction(list.reload);
  const { error, run } = action;
  const busy = action.busy !== null;
  const add = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await api.post(path, { hostname });
      setHostname('');
    });
  };
  const remove = (d: Domain) => {
    if (window.confirm(`Remove ${d.hostname}? Its trusted origins are removed with it.`)) void run(() => api.delete(`${path}/${d.id}`));
  };
  const domains = list.data?.domains ?? [];
  return (
    <div className="stack">
      <form className="card" onSubmit={add}>
        <p className="muted">
          Attach a domain you own. Point its DNS at this platform; the sign-in service then trusts requests from it (its trusted origins are listed below each domain).
        </p>
        <div className="inline-form">
          <Field label="Domain" name="hostname" required placeholder="shop.example.com" value={hostname} onChange={(e) => setHostname(e.target.value)} />
          <Button type="submit" busy={busy}>
            Add domain
          </Button>
        </div>
      </form>
      <ErrorNotice error={error ?? list.error} />
      {list.loading ? <Loading what="domains" /> : null}
      {!list.loading && domains.length === 0 ? (
        <div className="empty card">
          <p>
            No custom domains. <strong>{app.name}</strong> answers at <span className="mono">{app.url}</span>.
          </p>
        </div>
      ) : null}
      <ul className="plain-list">
        {domains.map((d) => (
          <li key={d.id} className="card domain-item">
            <div>
              <h3 className="mono">{d.hostname}</h3>
              <p className="muted">Trusted origins it added:</p>
              <ul className="chips" aria-label={`Trusted origins of ${d.hostname}`}>
                {d.trustedOrigins.map((o) => (
                  <li key={o} className="chip mono">
                    {o}
                  </li>
                ))}
              </ul>
            </div>
            <Button type="button" variant="danger" disabled={busy} onClick={() => remove(d)} aria-label={`Remove ${d.hostname}`}>
              Remove
            </Button>
          </li>
        ))}
      </ul>
    </div>
  );
}
