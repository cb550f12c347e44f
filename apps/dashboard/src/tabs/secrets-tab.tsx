import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Field, Loading } from '../components/ui.js';

export function SecretsTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/secrets`;
  const list = useResource<{ names: string[] }>(path);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction(list.reload);
  const { error } = action;
  const busy = action.busy !== null;
  const run = (work: () => Promise<unknown>) => {
    setSaved(null);
    return action.run(work);
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    const key = name.trim();
    void run(async () => {
      await api.put(path, { secrets: { [key]: value } });
      setName('');
      setValue('');
      setSaved(key);
    });
  };
  const remove = (secret: string) => {
    if (window.confirm(`Delete ${secret}? The next deploy runs without it.`)) void run(() => api.delete(`${path}/${encodeURIComponent(secret)}`));
  };
  const names = list.data?.names ?? [];
  return (
    <div className="stack">
      <form className="card" onSubmit={save}>
        <p className="muted">Environment variables given to {app.name} at build and run time. Values are encrypted and never shown again after saving; set a name again to replace its value.</p>
        <div className="inline-form">
          <Field label="Name" name="secret-name" required pattern="[A-Z_][A-Z0-9_]*" title="Capital letters, digits and underscores; not starting with a digit" placeholder="STRIPE_SECRET_KEY" autoComplete="off" spellCheck={false} value={name} onChange={(e) => setName(e.target.value.toUpperCase())} />
          <Field label="Value" name="secret-value" type="password" required autoComplete="new-password" value={value} onChange={(e) => setValue(e.target.value)} />
          <Button type="submit" busy={busy}>
            Save secret
          </Button>
        </div>
        {saved ? (
          <p className="notice notice-success" role="status">
            {saved} saved. Its value will not be shown again.
          </p>
        ) : null}
      </form>
      <ErrorNotice error={error ?? list.error} />
      {list.loading ? <Loading what="secrets" /> : null}
      {!list.loading && names.length === 0 ? (
        <div className="empty card">
          <p>No secrets yet. From a terminal:</p>
          <pre className="code-inline">
            <code>{`curl -X PUT ${app.apiBaseUrl}/secrets \\\n  -H "Authorization: Bearer $SLIPWAY_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"secrets": {"DATABASE_URL": "postgres://…"}}'`}</code>
          </pre>
        </div>
      ) : null}
      {names.length > 0 ? (
        <ul className="card plain-list secret-list" aria-label="Secrets">
          {names.map((n) => (
            <li key={n}>
              <span className="mono">{n}</span>
              <span className="muted" aria-label="value hidden">
                ••••••••
              </span>
              <Button type="button" variant="danger" disabled={busy} onClick={() => remove(n)} aria-label={`Delete ${n}`}>
                Delete
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
