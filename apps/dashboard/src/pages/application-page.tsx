import type { ApplicationDetails } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { CopyButton, ErrorNotice, Loading } from '../components/ui.js';
import { Link } from '../router.js';
import { ApiKeysTab } from '../tabs/api-keys-tab.js';
import { DatabaseTab } from '../tabs/database-tab.js';
import { DeploymentsTab } from '../tabs/deployments-tab.js';
import { DomainsTab } from '../tabs/domains-tab.js';
import { LogsTab } from '../tabs/logs-tab.js';
import { MetricsTab } from '../tabs/metrics-tab.js';
import { PreviewsTab } from '../tabs/previews-tab.js';
import { SecretsTab } from '../tabs/secrets-tab.js';
import { SignInTab } from '../tabs/sign-in-tab.js';
import { TokensTab } from '../tabs/tokens-tab.js';

export const TABS = [
  { id: 'deployments', label: 'Deployments' },
  { id: 'logs', label: 'Logs' },
  { id: 'metrics', label: 'Metrics' },
  { id: 'previews', label: 'Previews' },
  { id: 'keys', label: 'API keys' },
  { id: 'tokens', label: 'Access tokens' },
  { id: 'domains', label: 'Domains' },
  { id: 'secrets', label: 'Secrets' },
  { id: 'database', label: 'Database' },
  { id: 'sign-in', label: 'Sign-in' },
] as const;

export type TabId = (typeof TABS)[number]['id'];

export function ApplicationPage({ appId, tab }: { appId: string; tab: TabId }) {
  const app = useResource<ApplicationDetails>(`/applications/${appId}`);
  if (app.loading) return <Loading what="the application" />;
  if (!app.data) return <ErrorNotice error={app.error} />;
  const a = app.data;
  return (
    <div className="stack">
      <nav className="breadcrumbs" aria-label="Breadcrumb">
        <Link to="/">Applications</Link> <span aria-hidden="true">/</span> <span aria-current="page">{a.name}</span>
      </nav>
      <div className="page-head">
        <div>
          <h1>{a.name}</h1>
          <p className="address">
            <a href={a.url} target="_blank" rel="noreferrer" className="mono">
              {a.url.replace(/^https?:\/\//, '')}
            </a>
            <CopyButton value={a.url} label="Copy address" />
          </p>
        </div>
      </div>
      <nav className="tabs" aria-label="Application sections">
        {TABS.map((t) => (
          <Link key={t.id} to={`/apps/${appId}/${t.id}`} className="tab" aria-current={t.id === tab ? 'page' : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
      <section aria-label={TABS.find((t) => t.id === tab)!.label}>{renderTab(tab, a)}</section>
    </div>
  );
}

function renderTab(tab: TabId, app: ApplicationDetails) {
  switch (tab) {
    case 'deployments':
      return <DeploymentsTab app={app} />;
    case 'logs':
      return <LogsTab app={app} />;
    case 'metrics':
      return <MetricsTab app={app} />;
    case 'previews':
      return <PreviewsTab app={app} />;
    case 'keys':
      return <ApiKeysTab app={app} />;
    case 'tokens':
      return <TokensTab />;
    case 'domains':
      return <DomainsTab app={app} />;
    case 'secrets':
      return <SecretsTab app={app} />;
    case 'database':
      return <DatabaseTab app={app} />;
    case 'sign-in':
      return <SignInTab app={app} />;
  }
}
