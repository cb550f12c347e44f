import { useState } from 'react';
import { api } from '../api/client.js';
import type { ApplicationDetails, SignInInfo } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { Button, CopyButton, ErrorNotice, Loading } from '../components/ui.js';
import { formatWhen } from '../format.js';
import { SignInEmails } from './sign-in-emails.js';
import { SignInSettings } from './sign-in-settings.js';
import { SignInUsers } from './sign-in-users.js';

export function SignInTab({ app }: { app: ApplicationDetails }) {
  const path = `/applications/${app.id}/sign-in`;
  const info = useResource<SignInInfo>(path);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [env, setEnv] = useState<string | null>(null);

  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const enable = () => run(async () => (await api.post(path), await info.reload()));
  const revealEnv = () => run(async () => setEnv((await api.post<{ env: string }>(`${path}/env`)).env));
  const download = () => {
    if (!env) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([env], { type: 'text/plain' }));
    link.download = '.env.sign-in';
    link.click();
    URL.revokeObjectURL(link.href);
  };

  if (info.loading) return <Loading what="sign-in" />;
  if (!info.data) return <ErrorNotice error={info.error} />;
  const service = info.data.service;
  if (!service) {
    return (
      <div className="stack">
        <div className="empty card">
          <h2>Sign-in for {app.name}’s users</h2>
          <p>
            Email and password sign-in, sessions and signed tokens, run by the platform. Switching it on creates the application’s own database (it counts
            against your plan) with a <code>service_auth</code> schema holding your users.
          </p>
          <ErrorNotice error={error} />
          <Button type="button" busy={busy} onClick={() => void enable()}>
            Switch sign-in on
          </Button>
        </div>
      </div>
    );
  }
  return (
    <div className="stack">
      <div className="card">
        <h2>Sign-in is on</h2>
        <dl className="facts">
          <dt>Address</dt>
          <dd className="mono">
            {service.baseUrl} <CopyButton value={service.baseUrl} label="Copy sign-in address" />
          </dd>
          <dt>Keys (JWKS)</dt>
          <dd className="mono">{service.jwksUrl}</dd>
          <dt>Switched on</dt>
          <dd>{formatWhen(service.createdAt)}</dd>
          <dt>Trusted origins</dt>
          <dd>
            <ul className="chips" aria-label="Trusted origins">
              {service.trustedOrigins.map((o) => (
                <li key={o} className="chip mono">
                  {o}
                </li>
              ))}
            </ul>
          </dd>
        </dl>
        <ErrorNotice error={error} />
        {env ? (
          <div className="notice notice-success once-secret" role="status">
            <p>
              <strong>Append these to your .env.</strong> They hold the cookie secret; deploys receive them automatically.
            </p>
            <pre className="secret-value" data-testid="sign-in-env">
              {env}
            </pre>
            <div className="inline-form">
              <CopyButton value={env} />
              <Button type="button" variant="secondary" onClick={download}>
                Download
              </Button>
              <Button type="button" variant="ghost" onClick={() => setEnv(null)}>
                Hide
              </Button>
            </div>
          </div>
        ) : (
          <Button type="button" variant="secondary" busy={busy} onClick={() => void revealEnv()}>
            Show environment variables
          </Button>
        )}
      </div>
      <SignInUsers appId={app.id} />
      <SignInSettings appId={app.id} service={service} onSaved={() => void info.reload()} />
      <SignInEmails appId={app.id} />
    </div>
  );
}
