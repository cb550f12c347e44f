import { terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { CREDENTIALS, OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal } from '../output/terminal.js';

export const PREVIEWS_USAGE = `Usage: slipway previews [list] | rm <name>   [--json] [--application <id>]

Previews of the application (made by slipway deploy --preview [name]): each is served at its own
address {slug}--{name}, with the preview values of the secrets, and expires PREVIEW_TTL_HOURS
(default 7 days) after its last deploy. list: name, address, expiry; rm: deletes one (its address
stops answering, its releases and stored bytes go).

${CREDENTIALS}

${CONNECTION_USAGE}`;

interface PreviewView {
  name: string;
  url: string;
  expiresAt: string;
  createdAt: string;
  liveReleaseId: string | null;
}

export async function previewsCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...CONNECTION_OPTIONS, application: { type: 'string' } });
  if (values.help) {
    io.out.write(`${PREVIEWS_USAGE}\n`);
    return 0;
  }
  const [sub = 'list', ...rest] = positionals;
  if (sub === 'list' ? rest.length !== 0 : sub === 'rm' ? rest.length !== 1 : true)
    throw new UsageError(`${sub === 'rm' ? 'previews rm takes one name' : `unknown: previews ${visibleControls(positionals.join(' '))}`}\n\n${PREVIEWS_USAGE}`);
  const config = resolveConfig(values, env, process.cwd());
  const bearer = ownersCredential(config);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  const applicationId = await resolveApplication(client, bearer, config.applicationId);
  const base = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/previews`;
  if (sub === 'rm') {
    const removed = await client.json<{ removed: string }>('DELETE', `${base}/${encodeURIComponent(rest[0]!)}`, { bearer });
    io.out.write(terminal.json ? `${terminalJson(removed)}\n` : `${terminal.paint.green('✓')} Deleted preview ${visibleControls(removed.removed)}\n`);
    return 0;
  }
  const list = await client.json<{ previews: PreviewView[]; limit: number; ttlHours: number }>('GET', base, { bearer });
  if (terminal.json) {
    io.out.write(`${terminalJson(list)}\n`);
    return 0;
  }
  if (!list.previews.length) {
    io.out.write(`${terminal.paint.dim(`no previews (your plan allows ${list.limit}); make one with slipway deploy --preview [name]`)}\n`);
    return 0;
  }
  const width = Math.max(4, ...list.previews.map((p) => p.name.length));
  io.out.write(`${terminal.paint.dim(`${'NAME'.padEnd(width)}  ${'EXPIRES'.padEnd(20)}  ADDRESS`)}\n`);
  for (const p of list.previews) {
    const live = p.liveReleaseId ? '' : terminal.paint.dim(' (nothing released yet)');
    io.out.write(visibleControls(`${p.name.padEnd(width)}  ${p.expiresAt.slice(0, 16).replace('T', ' ').padEnd(20)}  ${p.url}`) + `${live}\n`);
  }
  io.out.write(`${terminal.paint.dim(`${list.previews.length} preview(s); each expires ${list.ttlHours} h after its last deploy`)}\n`);
  return 0;
}
