/**
 * Presentation helpers shared by the dashboard's pages (deployment steps, statuses, sizes).
 * The Vite + React app itself lands with the dashboard issue.
 */
export type DeploymentStatus = 'queued' | 'building' | 'releasing' | 'succeeded' | 'failed';

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function isTerminal(status: DeploymentStatus): boolean {
  return status === 'succeeded' || status === 'failed';
}

export const STATUS_TONE: Record<DeploymentStatus, 'neutral' | 'progress' | 'success' | 'danger'> = {
  queued: 'neutral',
  building: 'progress',
  releasing: 'progress',
  succeeded: 'success',
  failed: 'danger',
};
