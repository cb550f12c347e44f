import { formatBytes, terminalJson, visibleControls, type ReleaseSwitchView, type ReleaseView } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { CREDENTIALS, OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal, type Terminal } from '../output/terminal.js';

export const RELEASES_USAGE = `Usage: slipway releases [--json] [--application <id>]

Lists the application's kept releases, newest first: id, when it was built, the deployment
(task) that built it, whether it is live, its size. --json: {"releases": [...]}.

${CREDENTIALS}

${CONNECTION_USAGE}`;

export const ROLLBACK_USAGE = `Usage: slipway rollback [releaseId] [--json] [--application <id>]

Makes an earlier release live again: releaseId, or by default the previous one (the newest
release of a succeeded deployment older than the live one). Instant, no rebuild, and health-gated
like a deploy: the release is started and must pass its health check before it takes traffic;
if it does not, the live release keeps serving and the command exits 1 (release_unhealthy).

${CREDENTIALS}

${CONNECTION_USAGE}`;

export const PROMOTE_USAGE = `Usage: slipway promote <releaseId> [--json] [--application <id>]

Makes any kept release live (see slipway releases), without rebuilding; health-gated as rollback.

${CREDENTIALS}

${CONNECTION_USAGE}`;

const USAGE = { releases: RELEASES_USAGE, rollback: ROLLBACK_USAGE, promote: PROMOTE_USAGE } as const;

/** `slipway releases`, `slipway rollback [releaseId]`, `slipway promote <releaseId>`. */
export async function releasesCommand(command: keyof typeof USAGE, args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...CONNECTION_OPTIONS, application: { type: 'string' } });
  if (values.help) {
    io.out.write(`${USAGE[command]}\n`);
    return 0;
  }
  const most = command === 'releases' ? 0 : 1;
  const least = command === 'promote' ? 1 : 0;
  if (positionals.length < least || positionals.length > most)
    throw new UsageError(`${command} takes ${most === 0 ? 'no arguments' : least ? 'one release id' : 'at most one release id'}\n\n${USAGE[command]}`);
  const config = resolveConfig(values, env, process.cwd());
  const bearer = ownersCredential(config);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  const applicationId = await resolveApplication(client, bearer, config.applicationId);
  const base = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}`;
  if (command === 'releases') {
    const list = await client.json<{ releases: ReleaseView[] }>('GET', `${base}/releases`, { bearer });
    if (terminal.json) io.out.write(`${terminalJson(list)}\n`);
    else printReleases(list.releases, terminal);
    return 0;
  }
  const releaseId = positionals[0];
  if (!terminal.json) io.err.write(`${terminal.paint.dim('starting the release and waiting until it is healthy…')}\n`);
  const result =
    command === 'promote'
      ? await client.json<ReleaseSwitchView>('POST', `${base}/releases/${encodeURIComponent(releaseId!)}/live`, { bearer, body: {} })
      : await client.json<ReleaseSwitchView>('POST', `${base}/rollback`, { bearer, body: releaseId ? { releaseId } : {} });
  if (terminal.json) {
    io.out.write(`${terminalJson(result)}\n`);
    return 0;
  }
  const was = result.previousReleaseId && result.previousReleaseId !== result.liveReleaseId ? ` (was ${result.previousReleaseId})` : ' (it already was)';
  io.out.write(`${terminal.paint.green('✓')} ${visibleControls(`Release ${result.liveReleaseId} is live${was}`)}\n`);
  return 0;
}

function printReleases(releases: ReleaseView[], terminal: Terminal): void {
  if (releases.length === 0) {
    terminal.out.write(`${terminal.paint.dim('no releases yet: slipway deploy makes one')}\n`);
    return;
  }
  const rows = releases.map((r) => [
    visibleControls(r.id),
    new Date(r.createdAt).toISOString().replace('T', ' ').slice(0, 19),
    visibleControls(r.deploymentId),
    r.live ? 'live' : r.preview ? visibleControls(`preview ${r.preview}`) : r.deploymentStatus === 'succeeded' ? '' : visibleControls(r.deploymentStatus),
    formatBytes(r.sizeBytes),
  ]);
  const header = ['RELEASE', 'CREATED (UTC)', 'DEPLOYMENT', 'STATE', 'SIZE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  terminal.out.write(`${terminal.paint.bold(line(header))}\n`);
  for (const row of rows) terminal.out.write(`${row[3] === 'live' ? terminal.paint.green(line(row)) : line(row)}\n`);
}
