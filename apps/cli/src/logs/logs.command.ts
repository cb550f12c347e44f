import { terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { eventStream } from '../api/event-stream.js';
import { OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal, type Terminal } from '../output/terminal.js';

export const LOGS_USAGE = `Usage: slipway logs [--follow] [--since 15m] [--until <time>] [--release <id>] [--limit 200] [--preview <name>] [--json]

The application's runtime logs: every line its releases wrote to stdout or stderr (and the
platform's own notes: start, exit, restart, dropped lines), with time, stream and release.

  -f, --follow        keep printing lines as the app writes them (server-sent events; Ctrl-C stops)
  --since <time>      from this time: a duration back from now (30s, 15m, 2h, 1d) or ISO 8601
  --until <time>      up to this time (not with --follow)
  --release <id>      one release only (default: all of the application's releases)
  --limit <n>         the newest n lines of the window (1-5000, default 200; with --follow, the
                      backlog printed first, default none without --since)
  --preview <name>    the logs of that preview (slipway deploy --preview) instead of production's
  --application <id>  the application (SLIPWAY_APPLICATION_ID, "applicationId" in .slipway.json);
                      not needed with a project API key (it reaches its own) or with an owner
                      token that reaches one application
  --json              one JSON object per line: {"time","stream","text","releaseId"}

The text is the app's own output: control characters are shown as \\u00xx, never sent to the terminal.

${CONNECTION_USAGE}`;

interface LogLine {
  time: string;
  stream: string;
  text: string;
  releaseId: string;
}

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  follow: { type: 'boolean', short: 'f', default: false },
  since: { type: 'string' },
  until: { type: 'string' },
  release: { type: 'string' },
  limit: { type: 'string' },
  preview: { type: 'string' },
  application: { type: 'string' },
} as const;

export async function logsCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, OPTIONS);
  if (values.help) {
    io.out.write(`${LOGS_USAGE}\n`);
    return 0;
  }
  if (positionals.length) throw new UsageError(`logs takes no arguments (got ${positionals[0]})\n\n${LOGS_USAGE}`);
  if (values.follow && values.until) throw new UsageError('--until cannot be used with --follow');
  const config = resolveConfig(values, env, process.cwd());
  const bearer = ownersCredential(config);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const query: Record<string, string> = {};
  for (const name of ['since', 'until', 'release', 'limit', 'preview'] as const) if (values[name] !== undefined) query[name] = values[name];
  const client = new ApiClient(config.url);
  const applicationId = await resolveApplication(client, bearer, config.applicationId);
  const path = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/logs`;
  const print = (line: LogLine) => io.out.write(format(line, terminal));
  if (!values.follow) {
    const { lines } = await client.json<{ lines: LogLine[] }>('GET', path, { bearer, query });
    for (const line of lines) print(line);
    return 0;
  }
  const response = await client.request('GET', `${path}/stream`, { bearer, query, headers: { accept: 'text/event-stream' } });
  for await (const { data } of eventStream<LogLine>(response)) print(data);
  return 0;
}

/** One line: JSON exact (terminalJson), or `time release stream text` with the app's controls made visible. */
function format(line: LogLine, terminal: Terminal): string {
  const record = { time: line.time, stream: line.stream, text: line.text, releaseId: line.releaseId };
  if (terminal.json) return `${terminalJson(record)}\n`;
  const stream = line.stream === 'stderr' ? terminal.paint.red('stderr') : line.stream === 'slipway' ? terminal.paint.cyan('slipway') : 'stdout';
  return `${terminal.paint.dim(visibleControls(line.time))} ${terminal.paint.dim(visibleControls(line.releaseId.slice(0, 8)))} ${stream} ${visibleControls(line.text)}\n`;
}
