import { formatBytes, terminalJson, visibleControls, type BackupView, type DatabaseBackupsView as BackupsList, type RestoreView } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { CREDENTIALS, OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal } from '../output/terminal.js';

export const DB_USAGE = `Usage: slipway db backups                         what the database can be restored to
       slipway db backup [--label <text>]         mark a restore point now (e.g. before a migration)
       slipway db restore --to <when> [--into new] [--yes] [--no-wait]

The application's own database is backed up continuously: any moment of the plan's window (since
the oldest backup kept) can be restored.
  --to <when>   a time (ISO 8601, 2026-11-28T09:30:00Z), a duration back from now (90s, 15m, 2h,
                1d), or the id of a backup or restore point from slipway db backups
  --into new    restore into a new database beside the live one (its name is printed; the app
                keeps using the live one)
  (default)     in place: the app keeps its DATABASE_URL; its queries wait a moment while the
                restored database is swapped in; the database it replaced is kept under another
                name. Asks for --yes, since it replaces what the app sees.
  --no-wait     print the restore's id and return (poll with slipway db restore --status <id>)

${CREDENTIALS}

${CONNECTION_USAGE}`;

const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--to`: a duration back from now becomes a time; a time or an id goes as given. */
export function restoreTarget(value: string, now = Date.now()): string {
  const duration = DURATION.exec(value);
  if (duration) return new Date(now - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS]).toISOString();
  return value;
}

export async function dbCommand(sub: string | undefined, args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...CONNECTION_OPTIONS,
    application: { type: 'string' },
    label: { type: 'string' },
    to: { type: 'string' },
    into: { type: 'string' },
    yes: { type: 'boolean', short: 'y', default: false },
    'no-wait': { type: 'boolean', default: false },
    status: { type: 'string' },
  });
  if (values.help || sub === undefined || sub === 'help') {
    io.out.write(`${DB_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (!['backups', 'backup', 'restore'].includes(sub) || positionals.length)
    throw new UsageError(`unknown: db ${visibleControls([sub, ...positionals].join(' '))}\n\n${DB_USAGE}`);
  const config = resolveConfig(values, env, process.cwd());
  const bearer = ownersCredential(config);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  const applicationId = await resolveApplication(client, bearer, config.applicationId);
  const base = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/database`;
  const print = (value: unknown) => io.out.write(`${terminalJson(value)}\n`);

  if (sub === 'backups') {
    const list = await client.json<BackupsList>('GET', `${base}/backups`, { bearer });
    if (terminal.json) return (print(list), 0);
    if (list.health.failedAt)
      io.err.write(
        `${terminal.paint.red('!')} the platform's last backup attempt failed (${list.health.failedAt}); the operator sees why in the launcher's log\n`,
      );
    if (!list.pointInTime) {
      io.out.write(`${terminal.paint.dim('no backup yet: the first is taken when the platform starts')}\n`);
      return 0;
    }
    io.out.write(
      `Restorable to any moment from ${list.pointInTime.earliest.slice(0, 19).replace('T', ' ')} UTC to now (your plan: ${list.windowDays} day(s) back)\n`,
    );
    io.out.write(`${terminal.paint.dim(`${'ID'.padEnd(36)}  ${'KIND'.padEnd(13)}  ${'AT (UTC)'.padEnd(19)}  SIZE / LABEL`)}\n`);
    for (const b of list.backups) {
      const what = b.kind === 'base' ? (b.sizeBytes === null ? '' : `${formatBytes(b.sizeBytes)} (the whole server)`) : (b.label ?? '');
      io.out.write(
        visibleControls(`${b.id}  ${(b.kind === 'base' ? 'backup' : 'restore point').padEnd(13)}  ${b.at.slice(0, 19).replace('T', ' ')}  ${what}`) + '\n',
      );
    }
    for (const r of list.restores.slice(0, 5))
      io.out.write(
        terminal.paint.dim(
          visibleControls(
            `restore ${r.id}: ${r.status} (to ${r.to}, ${r.into === 'new' ? 'into a new database' : 'in place'})${r.error ? `: ${r.error}` : ''}`,
          ),
        ) + '\n',
      );
    return 0;
  }

  if (sub === 'backup') {
    const point = await client.json<BackupView>('POST', `${base}/backups`, { bearer, body: values.label ? { label: values.label } : {} });
    if (terminal.json) return (print(point), 0);
    io.out.write(`${terminal.paint.green('✓')} Restore point ${point.id} at ${point.at} — restore to it with: slipway db restore --to ${point.id}\n`);
    return 0;
  }

  let restore: RestoreView;
  if (values.status) {
    restore = await client.json<RestoreView>('GET', `${base}/restores/${encodeURIComponent(values.status)}`, { bearer });
  } else {
    if (!values.to) throw new UsageError(`--to is required\n\n${DB_USAGE}`);
    if (values.into !== undefined && values.into !== 'new' && values.into !== 'in-place') throw new UsageError('--into takes new (or in-place, the default)');
    const into = values.into === 'new' ? 'new' : 'in_place';
    if (into === 'in_place' && !values.yes) {
      throw new UsageError(
        'an in-place restore replaces what the application sees in its database (the current one is kept under another name): add --yes to go ahead, or --into new to restore beside it',
      );
    }
    restore = await client.json<RestoreView>('POST', `${base}/restores`, { bearer, body: { to: restoreTarget(values.to), into } });
    if (!terminal.json) io.err.write(`Restore ${restore.id}: to ${restore.to}, ${into === 'new' ? 'into a new database' : 'in place'}\n`);
  }
  let lastStep = '';
  const started = Date.now();
  while (!values['no-wait'] && (restore.status === 'queued' || restore.status === 'running')) {
    const step = restore.step ?? restore.status;
    if (step !== lastStep && !terminal.json)
      io.err.write(`  ${terminal.paint.dim(`${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s`)} ${visibleControls(step)}\n`);
    lastStep = step;
    await new Promise((resolve) => setTimeout(resolve, config.pollIntervalMs));
    restore = await client.json<RestoreView>('GET', `${base}/restores/${encodeURIComponent(restore.id)}`, { bearer });
  }
  if (terminal.json) print(restore);
  else if (restore.status === 'succeeded') {
    const size = restore.sizeBytes === null ? '' : `, ${formatBytes(restore.sizeBytes)}`;
    io.out.write(
      restore.into === 'new'
        ? `${terminal.paint.green('✓')} Restored to ${restore.to} into database ${restore.databaseName}${size} (the app still uses its own; connect with the app's credentials and this database name)\n`
        : `${terminal.paint.green('✓')} Restored to ${restore.to} in place${size}; the database it replaced is kept as ${restore.keptDatabase}\n`,
    );
  } else if (restore.status === 'failed')
    io.err.write(`${terminal.paint.red('✗')} Restore ${restore.id} failed: ${visibleControls(restore.error ?? 'unknown error')} (nothing was replaced)\n`);
  else io.out.write(`Restore ${restore.id}: ${restore.status}; follow it with slipway db restore --status ${restore.id}\n`);
  return restore.status === 'failed' ? 1 : 0;
}
