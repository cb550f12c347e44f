import { ApiException } from '@slipway/service-kit';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * An instant as the owners' API takes it: ISO 8601 (`2025-01-02T03:04:05Z`), or a duration back
 * from now (`15m`, `2h`, `30s`, `1d`). Undefined when absent; `bad_request` naming the field when unreadable.
 */
export function instant(field: string, raw: unknown, now = Date.now()): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const text = String(raw);
  const relative = /^(\d{1,9})([smhd])$/.exec(text);
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]!]!;
  const at = /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:\d\d)?)?$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at))
    throw new ApiException('bad_request', `${field}: an ISO 8601 time (2025-01-02T03:04:05Z) or a duration back from now (30s, 15m, 2h, 1d).`);
  return at;
}

/** `limit`: 1 to 5000 lines, 200 when absent. */
export function lineLimit(raw: unknown): number {
  if (raw === undefined || raw === '') return 200;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 5000) throw new ApiException('bad_request', 'limit: a whole number of lines from 1 to 5000.');
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `release`: a release id (its own application's; the edge only answers with the app's releases). */
export function releaseParam(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!UUID.test(String(raw))) throw new ApiException('not_found', 'This application has no such release.');
  return String(raw).toLowerCase();
}
