import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api } from './api/client.js';
import type { Owner } from './api/types.js';

interface Session {
  owner: Owner | null;
  checked: boolean;
  setOwner(owner: Owner | null): void;
  refresh(): Promise<void>;
}

const SessionContext = createContext<Session>({ owner: null, checked: false, setOwner: () => undefined, refresh: async () => undefined });

/** Who is signed in; any 401 from the API (cookie expired) signs the page out. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [owner, setOwner] = useState<Owner | null>(null);
  const [checked, setChecked] = useState(false);
  const refresh = useCallback(async () => {
    try {
      setOwner(await api.get<Owner>('/session'));
    } catch {
      setOwner(null);
    } finally {
      setChecked(true);
    }
  }, []);
  useEffect(() => {
    void refresh();
    const onSignedOut = () => setOwner(null);
    window.addEventListener('slipway:signed-out', onSignedOut);
    return () => window.removeEventListener('slipway:signed-out', onSignedOut);
  }, [refresh]);
  return <SessionContext.Provider value={{ owner, checked, setOwner, refresh }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  return useContext(SessionContext);
}
