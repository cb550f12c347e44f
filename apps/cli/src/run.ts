import { terminalJson, visibleControls } from '@slipway/contract';
import { BootstrapError } from './admin/bootstrap.service.js';
import { adminBackupCommand } from './admin/backup.command.js';
import { BOOTSTRAP_USAGE, bootstrapCommand } from './admin/bootstrap.command.js';
import { dbCommand } from './db/db.command.js';
import { ApiError, detailsOf, exitCodeOf, UnreachableError } from './api/api-error.js';
import { UsageError } from './args.js';
import { authCommand } from './auth/auth.command.js';
import type { CommandIo } from './command-io.js';
import { deployCommand } from './deploy/deploy.command.js';
import { logsCommand } from './logs/logs.command.js';
import { metricsCommand } from './metrics/metrics.command.js';
import { isTty } from './output/terminal.js';
import { previewsCommand } from './previews/previews.command.js';
import { releasesCommand } from './releases/releases.command.js';
import { secretsCommand } from './secrets/secrets.command.js';
import { statusCommand } from './status/status.command.js';

const USAGE = `Usage: slipway <command> [options]   (slipway <command> --help for details)

Commands:
  deploy [dir]                  deploy a folder and follow the build (--preview [name]: a preview)
  status <taskId>               show a deployment task (--wait to follow it)
  logs [--follow] [--since 15m] the application's runtime logs (--release <id>, --json)
  releases                      list the application's releases (live one marked)
  rollback [releaseId]          make the previous (or the given) release live again
  promote <releaseId>           make any kept release live, without rebuilding
  previews [rm <name>]          list the application's previews, or delete one
  secrets set NAME=value...     set environment variables of the application (--preview,
                                --production: that environment's own value)
  secrets unset NAME...         remove them
  secrets list                  list their names (values are never shown)
  auth enable                   switch on the sign-in service for the application's users
  auth env [--write .env]       its variables, or merge them into an env file
  metrics [--range hour|day]    requests/s, answers by class, latency, CPU, memory, restarts
  db backups                    what the application's database can be restored to
  db backup [--label <text>]    mark a restore point now
  db restore --to <when>        restore the database to a time, a duration ago or a backup
                                (--into new: beside it; in place needs --yes)

Operator commands:
  admin bootstrap               create an owner, an application, an API key and an owner token
  admin backup [--out <file>]   the whole platform in one sealed file, now
  admin restore <file>          rebuild a platform from such a file into an empty home

Exit codes: 0 ok, 1 failure (a failed deploy, a refused request), 2 usage or authentication error.

${BOOTSTRAP_USAGE}`;

/** Exit codes: 0 ok, 1 failure, 2 usage or authentication error. */
export async function run(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const [command, sub, ...rest] = argv;
  const io: CommandIo = { out, err, input };
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        out.write(`${USAGE}\n`);
        return command ? 0 : 2;
      case 'deploy':
        return await deployCommand(argv.slice(1), env, io);
      case 'status':
        return await statusCommand(argv.slice(1), env, io);
      case 'logs':
        return await logsCommand(argv.slice(1), env, io);
      case 'releases':
      case 'rollback':
      case 'promote':
        return await releasesCommand(command, argv.slice(1), env, io);
      case 'previews':
        return await previewsCommand(argv.slice(1), env, io);
      case 'secrets':
        return await secretsCommand(sub, rest, env, io);
      case 'metrics':
        return await metricsCommand(argv.slice(1), env, io);
      case 'auth':
        return await authCommand(sub, rest, env, io);
      case 'db':
        return await dbCommand(sub, rest, env, io);
      case 'admin':
        if (sub === 'bootstrap') return await bootstrapCommand(rest, env, out);
        if (sub === 'backup' || sub === 'restore') return await adminBackupCommand(sub, rest, env, out, err);
        break;
    }
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}\n\n${USAGE}`);
  } catch (error) {
    return reportError(error, argv, env, io);
  }
}

/**
 * An error's lines and JSON: every text in them may come from the platform (its message, a
 * proxy's page, a task id) and goes through `visibleControls` / `terminalJson` on its way out.
 */
function reportError(error: unknown, argv: string[], env: NodeJS.ProcessEnv, io: CommandIo): number {
  const err = { write: (text: string) => io.err.write(visibleControls(text)) };
  const out = { write: (value: unknown) => io.out.write(`${terminalJson(value)}\n`) };
  if (error instanceof UsageError || error instanceof BootstrapError) {
    err.write(`slipway: ${error.message}\n`);
    return 2;
  }
  const json = argv.includes('--json') || !isTty(io.out);
  if (error instanceof ApiError) {
    err.write(`slipway: ${error.line()}\n`);
    if (error.hint) err.write(`  ${error.hint}\n`);
    if (argv.includes('--verbose')) for (const line of detailsOf(error)) err.write(`  ${line}\n`);
    if (json) out.write({ ...error.body, error: error.message, code: error.code, status: error.status });
    return exitCodeOf(error);
  }
  if (error instanceof UnreachableError) {
    err.write(`slipway: ${error.message}\n`);
    if (json) out.write({ error: error.message, code: 'unreachable' });
    return 1;
  }
  err.write(`slipway: ${(error as Error).message?.split('\n')[0] ?? String(error)}\n`);
  if (env['SLIPWAY_DEBUG'] || argv.includes('--verbose')) err.write(`${(error as Error).stack}\n`);
  return 1;
}
