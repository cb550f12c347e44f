import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from './client.js';

export interface Resource<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload(): Promise<void>;
}

/**
 * GETs `path` and keeps it fresh. With `pollMs`, it polls while `keepPolling(data)` says so —
 * which is how the deployment page follows a running deploy.
 */
export function useResource<T>(path: string | null, options: { pollMs?: number; keepPolling?: (data: T) => boolean } = {}): Resource<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(options);
  latest.current = options;

  const load = useCallback(async () => {
    if (!path) return;
    try {
      const value = await api.get<T>(path);
      setData(value);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  }, [path]);

  useEffect(() => {
    setLoading(true);
    setData(null);
    void load();
  }, [load]);

  useEffect(() => {
    const { pollMs, keepPolling } = latest.current;
    if (!pollMs || data === null || (keepPolling && !keepPolling(data))) return;
    const timer = window.setTimeout(() => void load(), pollMs);
    return () => window.clearTimeout(timer);
  }, [data, error, load]);

  return { data, error, loading, reload: load };
}
