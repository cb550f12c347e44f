import { plainLogText, type DeployFinding, type Redactor } from '@slipway/contract';
import type { RuntimeReport } from '@slipway/runtime';

/** The 5xx answers a release gave in its first minute live: how many, and on which requests. */
export interface ServerErrorCount {
  count: number;
  /** `METHOD /path → status` (no query string) with how often each was seen; the first few distinct ones. */
  samples: Map<string, number>;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The deployment's hazards from what the runtime and the edge saw in the release's first minute
 * live: `runtime_crashed`, `runtime_5xx`, `runtime_errors`, each with `count` and an excerpt in
 * `detail`. Every text a tenant's app produced is redacted with the application's secret values
 * and made plain (no terminal control characters), as build logs are.
 */
export function runtimeHazards(
  report: RuntimeReport | undefined,
  errors: ServerErrorCount | undefined,
  redactor: Redactor,
  windowSeconds: number,
): DeployFinding[] {
  const clean = (text: string) => redactor.redact(plainLogText(redactor.redact(text)));
  const hazards: DeployFinding[] = [];
  if (report && report.crashes > 0) {
    hazards.push({
      code: 'runtime_crashed',
      severity: 'high',
      count: report.crashes,
      restarts: report.restarts,
      message: `The application's process exited ${plural(report.crashes, 'time')} in its first ${windowSeconds} s live (last: ${clean(report.lastExit ?? 'unknown')}) and was restarted ${plural(report.restarts, 'time')}; requests failed meanwhile. Its last output before the first exit is in detail; \`slipway logs\` has the rest.`,
      detail: clean(report.crashExcerpt),
    });
  }
  if (errors && errors.count > 0) {
    const samples = [...errors.samples].map(([what, n]) => `${what} (${n}×)`).join('\n');
    hazards.push({
      code: 'runtime_5xx',
      severity: 'medium',
      count: errors.count,
      message: `The application answered ${plural(errors.count, 'request')} with a 5xx status in its first ${windowSeconds} s live; the requests are in detail.`,
      detail: clean(samples),
    });
  }
  if (report && report.errorLines > 0) {
    hazards.push({
      code: 'runtime_errors',
      severity: 'low',
      count: report.errorLines,
      message: `The application wrote ${plural(report.errorLines, 'error line')} to stderr in its first ${windowSeconds} s live; the first ${report.errorExcerpt.length} are in detail.`,
      detail: clean(report.errorExcerpt.join('\n')),
    });
  }
  return hazards;
}
