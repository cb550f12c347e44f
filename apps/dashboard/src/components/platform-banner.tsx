import { useResource } from '../api/use-resource.js';

interface PlatformStatus {
  buildWorker: { status: 'up' | 'down' | 'unknown'; message?: string };
}

/**
 * A banner while no build worker consumes the deploy queue (the gateway reads the workers'
 * heartbeats): deploys are still accepted and wait. Checked every 10 s while signed in.
 */
export function PlatformBanner() {
  const { data } = useResource<PlatformStatus>('/platform-status', { pollMs: 10_000 });
  if (!data || data.buildWorker.status !== 'down') return null;
  return (
    <div className="notice notice-warning platform-banner" role="status">
      <strong>Builds are paused.</strong> No build worker is consuming the deploy queue right now. New deploys are accepted and wait in the queue; they start as
      soon as a worker is back. Running applications are not affected.
    </div>
  );
}
