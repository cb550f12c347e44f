import { BootstrapError } from './admin/bootstrap.service.js';
import { BOOTSTRAP_USAGE, bootstrapCommand } from './admin/bootstrap.command.js';
import { UsageError } from './args.js';

const USAGE = `Usage: slipway <command>

Operator commands:
  admin bootstrap   create an owner, an application, an API key and an owner token

${BOOTSTRAP_USAGE}`;

/** Exit codes: 0 ok, 1 failure, 2 usage or authentication error. */
export async function run(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      out.write(`${USAGE}\n`);
      return command ? 0 : 2;
    }
    if (command === 'admin' && sub === 'bootstrap') return await bootstrapCommand(rest, env, out);
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}\n\n${USAGE}`);
  } catch (error) {
    if (error instanceof UsageError || error instanceof BootstrapError) {
      err.write(`slipway: ${error.message}\n`);
      return 2;
    }
    err.write(`slipway: ${(error as Error).message?.split('\n')[0] ?? String(error)}\n`);
    if (env['SLIPWAY_DEBUG']) err.write(`${(error as Error).stack}\n`);
    return 1;
  }
}
