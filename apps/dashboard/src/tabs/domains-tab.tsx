import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, Domain } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { DomainCard } from '../components/domain-card.js';
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
  const verify = (d: Domain) => void run(() => api.post(`${path}/${d.id}/verify`), d.id);
  const remove = (d: Domain) => {
    if (window.confirm(`Remove ${d.hostname}? Its trusted origins are removed with it.`)) void run(() => api.delete(`${path}/${d.id}`));
  };
  const domains = list.data?.domains ?? [];
  return (
    <div className="stack">
      <form className="card" onSubmit={add}>
        <p className="muted">
          Attach a domain you own. You will get a DNS TXT record to add: once it is verified, this platform serves the application at that domain and the
          sign-in service trusts requests from it. Point the domain itself at this platform too.
        </p>
        <div className="inline-form">
          <Field label="Domain" name="hostname" required placeholder="shop.example.com" value={hostname} onChange={(e) => setHostname(e.target.value)} />
          <Button type="submit" busy={action.busy === 'form'} disabled={busy}>
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
          <DomainCard key={d.id} domain={d} busy={busy} verifying={action.busy === d.id} onVerify={() => verify(d)} onRemove={() => remove(d)} />
        ))}
      </ul>
    </div>
  );
}
