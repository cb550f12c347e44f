import { ApiException } from '@slipway/service-kit';
import tar from 'tar-stream';

/** The record types tar-stream buffers whole before it looks inside them. */
const LONG_HEADER_TYPES = new Map<string | null, string>([
  ['pax-header', 'PAX extended header'],
  ['pax-global-header', 'PAX global header'],
  ['gnu-long-path', 'GNU long name'],
  ['gnu-long-link-path', 'GNU long link name'],
]);

/** The part of tar-stream's (3.x) extractor this module relies on. */
interface ExtractInternals {
  _consumeHeader(): boolean;
  _header: { type: string; size: number; name: string } | null;
  destroy(error: Error): void;
}

/**
 * tar-stream reads an extended header (PAX `x`/`g`) or a GNU long name (`L`/`K`) by buffering
 * all of its declared size before parsing it, so a header claiming 48 MiB parks 48 MiB per
 * upload (or whatever arrives before another limit trips). This hooks the extractor right
 * after it decoded a 512-byte header block: when that block opens such a record and declares
 * more than `maxBytes`, the extractor is destroyed with `too_large` before a byte of the
 * record's body is buffered.
 *
 * It relies on tar-stream internals (pinned in package.json); `assertHookable` runs when this
 * module loads, so a tar-stream that no longer has them stops the gateway from starting
 * rather than letting the bound silently lapse.
 */
export function boundLongHeaders(extract: tar.Extract, maxBytes: number): tar.Extract {
  const internals = extract as unknown as ExtractInternals;
  const consumeHeader = internals._consumeHeader.bind(internals);
  internals._consumeHeader = () => {
    // The original decodes the next 512-byte block into `_header`; for these types it then only
    // notes how many bytes to buffer, so checking right after it is before any are.
    const result = consumeHeader();
    const header = internals._header;
    const what = header ? LONG_HEADER_TYPES.get(header.type) : undefined;
    // A size that did not decode to a whole number (NaN, null, negative base-256) is refused too.
    if (header && what && !(Number.isSafeInteger(header.size) && header.size >= 0 && header.size <= maxBytes)) {
      internals.destroy(new ApiException('too_large', `The archive has a ${what} of ${header.size} bytes; at most ${maxBytes} bytes are accepted.`));
      return false;
    }
    return result;
  };
  return extract;
}

/** Fails (at startup, when this module loads) if tar-stream no longer has what the hook needs. */
function assertHookable(): void {
  const probe = tar.extract() as unknown as Partial<ExtractInternals> & { destroy(): void };
  const ok = typeof probe._consumeHeader === 'function' && '_header' in probe;
  probe.destroy();
  if (!ok) throw new Error('tar-stream changed: the extended-header bound (tar-long-headers.ts) cannot be applied; refusing to start');
}

assertHookable();
