import type { Warning } from './types.js';

/** Lines kept from a build's output in a warning or an error, and the characters of each. */
const MAX_LINES = 10;
const MAX_LINE_CHARS = 300;
const MAX_DETAIL_CHARS = 2000;
/** What frameworks print when they warn: `warn`/`WARN`/`Warning:` (npm, Nuxt, SvelteKit), `⚠` (Next.js), `(!)` (Vite, Rollup). */
const WARNING_LINE = /\bwarn(ing)?\b|^\s*⚠|^\s*\(!\)/i;
/**
 * Lines about the build's surroundings the project cannot act on: npm's notices about its own
 * configuration, and Next.js's "No build cache found" (keeping `.next/cache` is the platform's job).
 */
const NOT_THE_BUILD = /^npm warn (config|Unknown)|No build cache found\b/i;
/** What a failing build prints about why: errors, failed network fetches, missing modules. */
const FAILURE_LINE =
  /^\s*URL:\s|\bestablishing a connection\b|\berror\b|\bERR!|\bfailed\b|\bcannot\b|\bcould not\b|\bENOTFOUND\b|\bEAI_AGAIN\b|\bECONNREFUSED\b|\bETIMEDOUT\b|\bECONNRESET\b|\bnot found\b|^\s*⨯/i;

/** The output as lines a reader can use: colours and carriage-return redraws removed, blank lines dropped. */
function plainLines(output: string): string[] {
  return (
    output
      // eslint-disable-next-line no-control-regex -- terminal colour codes are what is removed
      .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
      .split('\n')
      .map((line) =>
        (
          line
            .split('\r')
            .filter((part) => part.trim() !== '')
            .pop() ?? ''
        ).trimEnd(),
      )
      .filter((line) => line.trim() !== '')
  );
}

function bounded(lines: string[]): string {
  return [...new Set(lines)]
    .slice(0, MAX_LINES)
    .map((line) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line))
    .join('\n')
    .slice(0, MAX_DETAIL_CHARS);
}

/**
 * `build_output_warnings`: the framework's own warnings, with the lines (at most 10 of 300
 * characters). The caller passes the output already redacted, as the step's log is.
 */
export function buildOutputWarnings(buildLog: string): Warning[] {
  const lines = plainLines(buildLog).filter((line) => WARNING_LINE.test(line) && !NOT_THE_BUILD.test(line));
  if (lines.length === 0) return [];
  const detail = bounded(lines);
  const shown = detail.split('\n').length;
  return [
    {
      code: 'build_output_warnings',
      detail,
      message: `The build printed ${lines.length} warning line${lines.length === 1 ? '' : 's'}${shown < lines.length ? ` (the first ${shown} in detail)` : ''}; the whole output is in the build step's log.`,
    },
  ];
}

/**
 * What a failed install or build said about why, for the deploy's error message: the lines that
 * read like errors (a framework's own `Error:` line, a failed fetch such as `ENOTFOUND
 * fonts.googleapis.com`), the last six of them, else the last six lines printed. Bounded like the
 * warnings; the caller passes the output redacted.
 */
export function buildFailureLines(output: string): string {
  const lines = plainLines(output);
  const failing = lines.filter((line) => FAILURE_LINE.test(line) && !/^npm (warn|notice)\b/i.test(line));
  return bounded((failing.length ? failing : lines).slice(-6));
}
