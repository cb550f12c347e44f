import type { RestoreStatus } from './api/types.js';
import { formatMoment } from './format.js';

/** Any moment from `earliest` to now can be restored to (the owners' API's `pointInTime`). */
export interface RestoreWindow {
  earliest: string;
  latest: string;
}

const MINUTE = 60_000;
/** Where the restore form starts: a few minutes back, before whatever just went wrong. */
export const DEFAULT_LEAD_MS = 5 * MINUTE;

/** A time as a `datetime-local` input holds it: the reader's wall clock, to the minute. */
export function toLocalInput(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** A `datetime-local` value read as the reader's wall clock; null when empty or not a time. */
export function fromLocalInput(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const at = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * The input's bounds in whole minutes inside the window (the input has no seconds): the first
 * whole minute at or after `earliest`, the last one at or before now.
 */
export function momentBounds(window: RestoreWindow, now: number): { min: Date; max: Date } {
  const earliest = new Date(window.earliest).getTime();
  return { min: new Date(Math.ceil(earliest / MINUTE) * MINUTE), max: new Date(Math.floor(now / MINUTE) * MINUTE) };
}

/** A few minutes ago, or the window's edge when it is younger than that. */
export function defaultMoment(window: RestoreWindow, now: number): Date {
  const { min, max } = momentBounds(window, now);
  const wanted = Math.floor((now - DEFAULT_LEAD_MS) / MINUTE) * MINUTE;
  return new Date(Math.max(min.getTime(), Math.min(wanted, max.getTime())));
}

/**
 * Whether a moment (ISO) lies in the window: a backup older than the plan's window cannot be
 * restored to. The end is the server's clock (`latest`) or the reader's, whichever is later, so a
 * restore point just marked counts even when the reader's clock runs behind.
 */
export function isRestorable(iso: string, window: RestoreWindow | null, now: number): boolean {
  if (!window) return false;
  const at = new Date(iso).getTime();
  return at >= new Date(window.earliest).getTime() && at <= Math.max(now, new Date(window.latest).getTime());
}

/** Why the moment chosen cannot be restored to, in words; null when it can. */
export function momentProblem(at: Date | null, window: RestoreWindow, now: number, format: (iso: string) => string = formatMoment): string | null {
  if (!at) return 'Choose a date and a time.';
  if (at.getTime() > now) return 'That moment is still to come: choose one in the past.';
  if (at.getTime() < new Date(window.earliest).getTime())
    return `That is before the earliest moment you can restore to, ${format(momentBounds(window, now).min.toISOString())}.`;
  return null;
}

export function isActive(status: RestoreStatus): boolean {
  return status === 'queued' || status === 'running';
}
