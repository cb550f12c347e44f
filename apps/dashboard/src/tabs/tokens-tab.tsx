import { CredentialsPanel } from '../components/credentials-panel.js';

export function TokensTab() {
  return (
    <CredentialsPanel
      noun="access token"
      basePath="/tokens"
      listField="tokens"
      secretField="token"
      intro={
        <p className="muted">
          Personal access tokens belong to your account, not to one application: they authorise the platform calls that switch sign-in on (
          <code>POST /api/v1/auth</code>) for any of your applications.
        </p>
      }
      empty={<p>No access tokens yet.</p>}
    />
  );
}
