import type { PrecompressedCoding } from '@slipway/contract';

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** `Accept-Encoding` (RFC 9110 §12.5.3) as coding → weight; malformed items are ignored. */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of header.split(',')) {
    const [name, ...params] = item.split(';').map((p) => p.trim());
    if (!name) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [key, value] = param.split('=').map((p) => p.trim());
      if (key?.toLowerCase() !== 'q') continue;
      if (!value || !QVALUE.test(value)) valid = false;
      else q = Number(value);
    }
    const coding = name.toLowerCase() === 'x-gzip' ? 'gzip' : name.toLowerCase();
    if (valid) out.set(coding, Math.max(q, out.get(coding) ?? 0));
  }
  return out;
}

/** Clients send a handful of distinct headers: parsed once each (a bounded memo, cleared when full). */
const parsed = new Map<string, Map<string, number>>();
const PARSED_MAX = 256;

function weightsOf(header: string): Map<string, number> {
  if (header.length > 256) return weights(header);
  let w = parsed.get(header);
  if (!w) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(header, (w = weights(header)));
  }
  return w;
}

/**
 * Which of the `available` codings (in the edge's order of preference) to send, or null for the
 * file as it is. No header, an empty one, a coding at `q=0` (or left out, with no `*`) → not that
 * coding; the highest weight wins, ties go to the earlier available coding; `identity` listed
 * with a higher weight than every acceptable coding wins too.
 */
export function chooseCoding(header: string | string[] | undefined, available: readonly PrecompressedCoding[]): PrecompressedCoding | null {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text || available.length === 0) return null;
  const w = weightsOf(text);
  let best: PrecompressedCoding | null = null;
  let bestQ = 0;
  for (const coding of available) {
    const q = w.get(coding) ?? w.get('*') ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identity = w.get('identity');
  return identity !== undefined && identity > bestQ ? null : best;
}
