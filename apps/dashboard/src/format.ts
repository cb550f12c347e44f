/**
 * Presentation helpers shared by the dashboard's pages (deployment steps, statuses, sizes, times).
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

/** Sizes as the platform's messages say them (binary units, named as such: KiB, MiB, GiB). */
export { formatBytes } from '@slipway/contract';

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

/** "3 min ago", "just now", or a date for anything older than a week. */
export function formatWhen(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const then = new Date(iso).getTime();
  if (!Number.isFinite(then)) return '—';
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 7) return `${days} d ago`;
  return new Date(iso).toISOString().slice(0, 10);
}

/** A moment in the reader's own time zone and language, to the minute: "28 Nov 2026, 09:30". */
export function formatMoment(iso: string, options: { locale?: string; timeZone?: string } = {}): string {
  const at = new Date(iso);
  if (!Number.isFinite(at.getTime())) return '—';
  return at.toLocaleString(options.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: options.timeZone });
}

const ISO_UTC = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g;

/** The platform's sentences name times in UTC ISO 8601; a person reads them in their own time zone. */
export function localizeTimes(text: string, options: { locale?: string; timeZone?: string } = {}): string {
  return text.replace(ISO_UTC, (iso) => formatMoment(iso, options));
}
