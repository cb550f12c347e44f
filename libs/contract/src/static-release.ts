/**
 * How a static release carries its precompressed text files. The build worker writes, for each
 * compressible regular file `<path>` of the release, `<PRECOMPRESSED_DIR>/<path>.br` and
 * `<PRECOMPRESSED_DIR>/<path>.gz` when they are smaller than the file; the edge serves them with
 * `Content-Encoding` and never serves the directory itself (a build output's own directory of
 * that name is never packed). Releases packed without it are served uncompressed.
 */
export const PRECOMPRESSED_DIR = '.slipway-precompressed';

/** Content codings the edge can serve from a release, in the order it prefers them, with their file suffix. */
export const PRECOMPRESSED_ENCODINGS = [
  { coding: 'br', suffix: '.br' },
  { coding: 'gzip', suffix: '.gz' },
] as const;

export type PrecompressedCoding = (typeof PRECOMPRESSED_ENCODINGS)[number]['coding'];

/** Files smaller than this are not worth compressing; larger than the maximum are served as they are. */
export const PRECOMPRESS_MIN_BYTES = 512;
export const PRECOMPRESS_MAX_BYTES = 32 * 1024 * 1024;

/** Text (and wasm) files by extension: what the worker precompresses. */
const COMPRESSIBLE = /\.(html?|css|m?js|cjs|json|map|webmanifest|xml|svg|txt|md|csv|tsv|wasm|ico|ttf|otf|eot|mjml|vtt|ics|rss|atom)$/i;

export function isPrecompressible(path: string, size: number): boolean {
  return size >= PRECOMPRESS_MIN_BYTES && size <= PRECOMPRESS_MAX_BYTES && COMPRESSIBLE.test(path);
}
