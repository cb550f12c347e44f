import { formatBytes, terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { CREDENTIALS, OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal } from '../output/terminal.js';

export const METRICS_USAGE = `Usage: slipway metrics [--range hour|day] [--preview <name>] [--application <id>] [--json]

The application's requests per second, answers by class (2xx/3xx/4xx/5xx), p50/p95/p99
latency, CPU, memory and restarts over the last hour (by the minute) or day (by 10 minutes),
as the edge counted them. --preview <name>: that preview's instead of production's.
--json: the whole series (summary and points).

${CREDENTIALS}

${CONNECTION_USAGE}`;

interface Point {
  time?: string;
  requests: number;
  requestsPerSecond: number;
  byClass: Record<string, number>;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  cpu: number;
  memoryBytes: number | null;
  restarts: number;
}

const ms = (v: number | null) => (v === null ? '–' : `${v} ms`);

export async function metricsCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...CONNECTION_OPTIONS,
    application: { type: 'string' },
    range: { type: 'string', default: 'hour' },
    preview: { type: 'string' },
  });
  if (values.help) {
    io.out.write(`${METRICS_USAGE}\n`);
    return 0;
  }
  if (positionals.length) throw new UsageError('metrics takes no arguments');
  if (values.range !== 'hour' && values.range !== 'day') throw new UsageError(`--range is hour or day, not ${values.range}`);
  const config = resolveConfig(values, env, process.cwd());
  const bearer = ownersCredential(config);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  const applicationId = await resolveApplication(client, bearer, config.applicationId);
  const series = await client.json<{ summary: Point; points: Point[] }>('GET', `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/metrics`, {
    bearer,
    query: { range: values.range, ...(values.preview !== undefined ? { preview: values.preview } : {}) },
  });
  if (terminal.json) {
    io.out.write(`${terminalJson(series)}\n`);
    return 0;
  }
  const s = series.summary;
  // Keys and all: from the platform, shown, never interpreted.
  const classes = visibleControls(
    Object.entries(s.byClass)
      .map(([c, n]) => `${c} ${n}`)
      .join(' · '),
  );
  io.out.write(`${terminal.paint.bold(`Last ${values.range}`)}
  requests   ${s.requests} (${s.requestsPerSecond}/s)   ${classes}
  latency    p50 ${ms(s.latencyMs.p50)} · p95 ${ms(s.latencyMs.p95)} · p99 ${ms(s.latencyMs.p99)}
  cpu        ${Math.round(s.cpu * 1000) / 10}% of a core on average
  memory     ${s.memoryBytes === null ? '–' : `${formatBytes(s.memoryBytes)} at most`}
  restarts   ${s.restarts}
`);
  return 0;
}
