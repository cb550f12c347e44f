import { useCallback, useState } from 'react';

export interface Action {
  /** What is running: the id given to `run`, or null when idle. */
  busy: string | null;
  /** The last failure, shown by <ErrorNotice>; cleared when the next action starts. */
  error: unknown;
  /** Runs `work`, then `after` (usually the list's reload); a failure lands in `error`. */
  run(work: () => Promise<unknown>, id?: string): Promise<void>;
}

/** One form's or list's mutations: a busy marker, the error to show, and the reload afterwards. */
export function useAction(after: () => Promise<void>): Action {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(
    async (work: () => Promise<unknown>, id = 'form') => {
      setBusy(id);
      setError(null);
      try {
        await work();
        await after();
      } catch (e) {
        setError(e);
      } finally {
        setBusy(null);
      }
    },
    [after],
  );
  return { busy, error, run };
}
