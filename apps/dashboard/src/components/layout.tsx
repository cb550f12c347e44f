import type { ReactNode } from 'react';
import { api } from '../api/client.js';
import { Link, useRouter } from '../router.js';
import { useSession } from '../session.js';
import { PlatformBanner } from './platform-banner.js';

const PLAN_NAMES: Record<string, string> = { free: 'Free', go: 'Go', pro: 'Pro', scale: 'Scale' };

export function Layout({ children }: { children: ReactNode }) {
  const { owner, setOwner } = useSession();
  const { navigate } = useRouter();
  const signOut = async () => {
    try {
      await api.post('/session/sign-out');
    } finally {
      setOwner(null);
      navigate('/sign-in');
    }
  };
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Slipway home">
          <svg className="brand-mark" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true">
            <path d="M12 3v13H5z" fill="#2f5bd3" />
            <path d="M13.5 6v10H19z" fill="#8fa9ee" />
            <path d="M3 18h18l-2.5 3h-13z" fill="#1d2330" />
          </svg>
          Slipway
        </Link>
        {owner ? (
          <nav className="account" aria-label="Account">
            <span className="plan" title="Application databases used on your plan">
              {PLAN_NAMES[owner.plan] ?? owner.plan} plan · {owner.databases.used} of {owner.databases.allowed} database
              {owner.databases.allowed === 1 ? '' : 's'}
            </span>
            <span className="email">{owner.email}</span>
            <button type="button" className="button button-ghost" onClick={() => void signOut()}>
              Sign out
            </button>
          </nav>
        ) : null}
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {owner ? <PlatformBanner /> : null}
        {children}
      </main>
    </div>
  );
}
