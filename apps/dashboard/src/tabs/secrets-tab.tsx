import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Field, Loading } from '../components/ui.js';

type Scope = 'all' | 'production' | 'preview';
const SCOPE_LABEL: Record<Scope, string> = { all: 'production and previews', production: 'production only', preview: 'previews only' };

export function SecretsTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/secrets`;
  const list = useResource<{ names: string[]; secrets?: { name: string; scopes: Scope[] }[] }>(path);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('all');
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
      await api.put(scope === 'all' ? path : `${path}?scope=${scope}`, { secrets: { [key]: value } });
      setName('');
      setValue('');
      setSaved(key);
    });
  };
  const remove = (secret: string, from: Scope) => {
    const what =
      from === 'all'
        ? `Delete ${secret} everywhere? The next deploy runs without it.`
        : `Delete the ${from} value of ${secret}? The next ${from === 'preview' ? 'preview ' : ''}deploy gets the value for both, if there is one.`;
    if (window.confirm(what)) void run(() => api.delete(`${path}/${encodeURIComponent(secret)}${from === 'all' ? '' : `?scope=${from}`}`));
  };
  const names = list.data?.names ?? [];
  const scopesOf = new Map((list.data?.secrets ?? []).map((s) => [s.name, s.scopes]));
  return (
    <div className="stack">
      <form className="card" onSubmit={save}>
        <p className="muted">
          Environment variables given to {app.name} at build and run time. Values are encrypted and never shown again after saving; set a name again to replace
          its value. A value for production only or previews only wins over the value for both there.
        </p>
        <div className="inline-form">
          <Field
            label="Name"
            name="secret-name"
            required
            pattern="[A-Z_][A-Z0-9_]*"
            title="Capital letters, digits and underscores; not starting with a digit"
            placeholder="STRIPE_SECRET_KEY"
            autoComplete="off"
            spellCheck={false}
            value={name}
            onChange={(e) => setName(e.target.value.toUpperCase())}
          />
          <Field
            label="Value"
            name="secret-value"
            type="password"
            required
            autoComplete="new-password"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
          <div className="field">
            <label htmlFor="secret-scope">For</label>
            <select id="secret-scope" name="secret-scope" value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
              {(Object.keys(SCOPE_LABEL) as Scope[]).map((s) => (
                <option key={s} value={s}>
                  {SCOPE_LABEL[s]}
                </option>
              ))}
            </select>
          </div>
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
          {names.flatMap((n) =>
            (scopesOf.get(n) ?? ['all' as Scope]).map((s) => (
              <li key={`${n}:${s}`}>
                <span className="mono">{n}</span>
                <span className="badge">{SCOPE_LABEL[s]}</span>
                <span className="muted" aria-label="value hidden">
                  ••••••••
                </span>
                <Button type="button" variant="danger" disabled={busy} onClick={() => remove(n, s)} aria-label={`Delete ${n} (${SCOPE_LABEL[s]})`}>
                  Delete
                </Button>
              </li>
            )),
          )}
        </ul>
      ) : null}
    </div>
  );
}
