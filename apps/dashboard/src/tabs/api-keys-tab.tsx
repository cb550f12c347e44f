import type { ApplicationDetails } from '../api/types.js';
import { CredentialsPanel } from '../components/credentials-panel.js';

export function ApiKeysTab({ app }: { app: ApplicationDetails }) {
  return (
    <CredentialsPanel
      noun="API key"
      basePath={`/applications/${app.id}/api-keys`}
      listField="keys"
      secretField="key"
      intro={
        <p className="muted">
          A project API key deploys <strong>{app.name}</strong> and manages its secrets through <code>{app.apiBaseUrl}</code>. It works for this application
          only.
        </p>
      }
      empty={<p>No API keys yet. Create one to deploy from your terminal or CI.</p>}
    />
  );
}
