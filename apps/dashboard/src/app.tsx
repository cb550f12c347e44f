import { useEffect } from 'react';
import { Layout } from './components/layout.js';
import { Loading } from './components/ui.js';
import { ApplicationPage, TABS, type TabId } from './pages/application-page.js';
import { ApplicationsPage } from './pages/applications-page.js';
import { AuthPage } from './pages/auth-page.js';
import { DeploymentPage } from './pages/deployment-page.js';
import { matchPath, useRouter } from './router.js';
import { useSession } from './session.js';

const PUBLIC_PATHS = new Set(['/sign-in', '/sign-up']);

export function App() {
  const { owner, checked } = useSession();
  const { path, navigate } = useRouter();
  const isPublic = PUBLIC_PATHS.has(path);

  useEffect(() => {
    if (!checked) return;
    if (!owner && !isPublic) navigate('/sign-in', { replace: true });
    if (owner && isPublic) navigate('/', { replace: true });
  }, [checked, owner, isPublic, navigate]);

  useEffect(() => {
    document.title = titleFor(path);
  }, [path]);

  if (!checked) return <Loading what="Slipway" />;
  return <Layout>{owner ? <SignedIn path={path} /> : isPublic ? <AuthPage mode={path === '/sign-up' ? 'sign-up' : 'sign-in'} /> : null}</Layout>;
}

function SignedIn({ path }: { path: string }) {
  const deployment = matchPath('/apps/:appId/deployments/:deploymentId', path);
  if (deployment) return <DeploymentPage appId={deployment['appId']!} deploymentId={deployment['deploymentId']!} />;
  const tab = matchPath('/apps/:appId/:tab', path);
  if (tab && TABS.some((t) => t.id === tab['tab'])) return <ApplicationPage key={tab['appId']} appId={tab['appId']!} tab={tab['tab'] as TabId} />;
  const app = matchPath('/apps/:appId', path);
  if (app) return <ApplicationPage key={app['appId']} appId={app['appId']!} tab="deployments" />;
  if (path === '/') return <ApplicationsPage />;
  return (
    <div className="empty card">
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
    </div>
  );
}

function titleFor(path: string): string {
  if (path === '/sign-in') return 'Sign in · Slipway';
  if (path === '/sign-up') return 'Create account · Slipway';
  if (path.includes('/deployments/')) return 'Deployment · Slipway';
  if (path.startsWith('/apps/')) return 'Application · Slipway';
  return 'Applications · Slipway';
}
