import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { SignInServiceView } from '../api/types.js';
import { Button, ErrorNotice, Field } from '../components/ui.js';
import { OidcProviders, SignInPlugins } from './sign-in-plugins.js';

const PROVIDERS = [
  { id: 'github', label: 'GitHub' },
  { id: 'google', label: 'Google' },
] as const;

export function SignInSettings({ appId, service, onSaved }: { appId: string; service: SignInServiceView; onSaved(): void }) {
  const [requireVerification, setRequireVerification] = useState(service.settings.requireEmailVerification);
  const [allowLocalhost, setAllowLocalhost] = useState(service.settings.allowLocalhost);
  const [credentials, setCredentials] = useState<Record<string, { clientId: string; clientSecret: string }>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);

  const save = async (body: object) => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await api.patch(`/applications/${appId}/sign-in/settings`, body);
      setCredentials({});
      setSaved(true);
      onSaved();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const socialProviders = Object.fromEntries(Object.entries(credentials).filter(([, c]) => c.clientId && c.clientSecret));
    void save({ requireEmailVerification: requireVerification, allowLocalhost, ...(Object.keys(socialProviders).length ? { socialProviders } : {}) });
  };
  const edit = (provider: string, field: 'clientId' | 'clientSecret', value: string) =>
    setCredentials((c) => ({ ...c, [provider]: { ...(c[provider] ?? { clientId: '', clientSecret: '' }), [field]: value } }));

  return (
    <>
      <form className="card" onSubmit={submit} aria-label="Sign-in settings">
        <h2>Settings</h2>
        <label className="checkbox">
          <input type="checkbox" checked={requireVerification} onChange={(e) => setRequireVerification(e.target.checked)} /> Require email verification before
          sign-in
        </label>
        <label className="checkbox">
          <input type="checkbox" checked={allowLocalhost} onChange={(e) => setAllowLocalhost(e.target.checked)} /> Allow sign-in from localhost (local
          development)
        </label>
        {PROVIDERS.map((p) => {
          const current = service.socialProviders[p.id];
          return (
            <fieldset key={p.id}>
              <legend>{p.label} sign-in</legend>
              {current ? (
                <p className="muted">
                  Set up with client id <span className="mono">{current.clientId}</span>. Callback URL: <span className="mono">{current.callbackUrl}</span>{' '}
                  <Button type="button" variant="ghost" disabled={busy} onClick={() => void save({ socialProviders: { [p.id]: null } })}>
                    Remove
                  </Button>
                </p>
              ) : (
                <p className="muted">
                  Create an OAuth app with {p.label} (callback <span className="mono">{`${service.baseUrl}/callback/${p.id}`}</span>) and enter its credentials.
                </p>
              )}
              <div className="inline-form">
                <Field
                  label="Client id"
                  name={`${p.id}-client-id`}
                  value={credentials[p.id]?.clientId ?? ''}
                  onChange={(e) => edit(p.id, 'clientId', e.target.value)}
                />
                <Field
                  label="Client secret"
                  name={`${p.id}-client-secret`}
                  type="password"
                  autoComplete="off"
                  value={credentials[p.id]?.clientSecret ?? ''}
                  onChange={(e) => edit(p.id, 'clientSecret', e.target.value)}
                />
              </div>
            </fieldset>
          );
        })}
        <ErrorNotice error={error} />
        {saved ? <p role="status">Saved.</p> : null}
        <div>
          <Button type="submit" busy={busy}>
            Save settings
          </Button>
        </div>
      </form>
      <SignInPlugins appId={appId} service={service} onSaved={onSaved} />
      <OidcProviders appId={appId} service={service} onSaved={onSaved} />
    </>
  );
}
