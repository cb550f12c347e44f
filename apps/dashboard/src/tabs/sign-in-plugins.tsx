import { useState, type FormEvent } from 'react';
import { SIGN_IN_PLUGINS, type SignInPluginName } from '@slipway/contract';
import { api } from '../api/client.js';
import type { SignInServiceView } from '../api/types.js';
import { Button, ErrorNotice, Field } from '../components/ui.js';

const PLUGINS: Record<SignInPluginName, { name: string; about: string }> = {
  twoFactor: { name: 'Two-factor authentication', about: 'Users add an authenticator app (TOTP), backup codes or codes by email as a second step.' },
  passkey: { name: 'Passkeys', about: 'Users sign in with a passkey (WebAuthn) instead of a password.' },
  magicLink: { name: 'Magic links', about: 'Users sign in by a link sent to their email.' },
  emailOTP: { name: 'Email one-time codes', about: 'Users sign in, verify their email or reset their password with a code sent by email.' },
  organization: { name: 'Organizations', about: 'Users form organizations with members, roles and invitations.' },
  admin: { name: 'Admin', about: 'Users whose role is admin can list, ban and manage other users.' },
};

/** One switch per sign-in plugin, saved at once; a plugin that is off answers 404 on its routes. */
export function SignInPlugins({ appId, service, onSaved }: { appId: string; service: SignInServiceView; onSaved(): void }) {
  const [plugins, setPlugins] = useState(service.plugins);
  const [issuer, setIssuer] = useState(service.plugins.twoFactor.issuer ?? '');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const patch = async (name: SignInPluginName, value: object) => {
    const before = plugins;
    // The switch moves at once; it moves back if the owners' API refuses.
    setPlugins((p) => ({ ...p, [name]: { ...p[name], ...value } }));
    setBusy(true);
    setError(null);
    try {
      const updated = await api.patch<{ service: SignInServiceView }>(`/applications/${appId}/sign-in/settings`, { plugins: { [name]: value } });
      setPlugins(updated.service.plugins);
      onSaved();
    } catch (e) {
      setPlugins(before);
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-label="Plugins">
      <h2>Plugins</h2>
      <p className="muted">Each plugin works with Better Auth’s client plugin of the same name. Off, its routes do not exist.</p>
      {SIGN_IN_PLUGINS.map((name) => (
        <div key={name} className="plugin-row">
          <label className="checkbox">
            <input
              type="checkbox"
              role="switch"
              aria-describedby={`plugin-${name}-about`}
              checked={plugins[name].enabled}
              disabled={busy}
              onChange={(e) =>
                void patch(name, name === 'twoFactor' && issuer.trim() ? { enabled: e.target.checked, issuer: issuer.trim() } : { enabled: e.target.checked })
              }
            />{' '}
            {PLUGINS[name].name}
          </label>
          <p className="muted" id={`plugin-${name}-about`}>
            {PLUGINS[name].about}
          </p>
          {name === 'twoFactor' ? (
            <div className="inline-form">
              <Field
                label="Issuer name shown by authenticator apps"
                name="two-factor-issuer"
                value={issuer}
                maxLength={100}
                onChange={(e) => setIssuer(e.target.value)}
              />
              <Button
                type="button"
                variant="secondary"
                disabled={busy || !issuer.trim()}
                onClick={() => void patch('twoFactor', { enabled: plugins.twoFactor.enabled, issuer: issuer.trim() })}
              >
                Save issuer
              </Button>
            </div>
          ) : null}
          {name === 'organization' ? (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={plugins.organization.allowUserToCreateOrganization ?? true}
                disabled={busy}
                onChange={(e) => void patch('organization', { enabled: plugins.organization.enabled, allowUserToCreateOrganization: e.target.checked })}
              />{' '}
              Allow users to create organizations
            </label>
          ) : null}
        </div>
      ))}
      <ErrorNotice error={error} />
    </section>
  );
}

const EMPTY = { id: '', issuer: '', clientId: '', clientSecret: '' };

/** Generic OpenID Connect providers: add (id, issuer, client), see the callback URL to register, remove. */
export function OidcProviders({ appId, service, onSaved }: { appId: string; service: SignInServiceView; onSaved(): void }) {
  const [providers, setProviders] = useState(service.oidcProviders ?? {});
  const [draft, setDraft] = useState(EMPTY);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const save = async (body: object) => {
    setBusy(true);
    setError(null);
    try {
      const updated = await api.patch<{ service: SignInServiceView }>(`/applications/${appId}/sign-in/settings`, { oidcProviders: body });
      setProviders(updated.service.oidcProviders);
      setDraft(EMPTY);
      onSaved();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save({ [draft.id.trim()]: { issuer: draft.issuer.trim(), clientId: draft.clientId.trim(), clientSecret: draft.clientSecret } });
  };
  const edit = (field: keyof typeof EMPTY) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [field]: e.target.value }));
  const id = draft.id.trim();

  return (
    <form className="card" onSubmit={submit} aria-label="OpenID Connect providers">
      <h2>OpenID Connect providers</h2>
      <p className="muted">
        Any OpenID Connect provider (Okta, Auth0, Keycloak, Microsoft Entra ID…): users sign in with{' '}
        <span className="mono">
          signIn.social({'{'} provider: id {'}'})
        </span>
        .
      </p>
      {Object.keys(providers).length === 0 ? <p className="muted">No provider yet.</p> : null}
      <ul className="plain-list">
        {Object.entries(providers).map(([pid, p]) => (
          <li key={pid}>
            <strong className="mono">{pid}</strong>: issuer <span className="mono">{p.issuer}</span>, client id <span className="mono">{p.clientId}</span>.
            Callback URL to register:{' '}
            <span className="mono" data-testid={`oidc-callback-${pid}`}>
              {p.callbackUrl}
            </span>{' '}
            <Button type="button" variant="ghost" disabled={busy} aria-label={`Remove ${pid}`} onClick={() => void save({ [pid]: null })}>
              Remove
            </Button>
          </li>
        ))}
      </ul>
      <fieldset>
        <legend>Add a provider</legend>
        <div className="inline-form">
          <Field
            label="Provider id"
            name="oidc-id"
            required
            pattern="[a-z0-9\-]{1,32}"
            maxLength={32}
            value={draft.id}
            onChange={edit('id')}
            hint="a-z, 0-9 and -; not github or google"
          />
          <Field
            label="Issuer URL"
            name="oidc-issuer"
            required
            type="url"
            placeholder="https://login.example.com"
            value={draft.issuer}
            onChange={edit('issuer')}
          />
          <Field label="Client id" name="oidc-client-id" required value={draft.clientId} onChange={edit('clientId')} />
          <Field
            label="Client secret"
            name="oidc-client-secret"
            required
            type="password"
            autoComplete="off"
            value={draft.clientSecret}
            onChange={edit('clientSecret')}
          />
        </div>
        {id ? (
          <p className="muted">
            Register this callback URL with the provider: <span className="mono">{`${service.baseUrl}/callback/${id}`}</span>
          </p>
        ) : null}
      </fieldset>
      <ErrorNotice error={error} />
      <div>
        <Button type="submit" busy={busy}>
          Add provider
        </Button>
      </div>
    </form>
  );
}
