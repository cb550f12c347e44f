import { chmod, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal } from '../output/terminal.js';
import { mergeEnvFile, parseEnvLines } from './env-file.js';

export const AUTH_USAGE = `Usage: slipway auth enable [--application <id>]
       slipway auth env [--application <id>] [--write <file>]

Switches on the sign-in service for the application's end users, and gets its variables
(SERVICE_AUTH_BASE_URL, SERVICE_AUTH_COOKIE_SECRET, SERVICE_AUTH_JWKS_URL, VITE_SERVICE_AUTH_URL).
Authenticates with the owner token (--token, SLIPWAY_TOKEN). The application id comes from
--application, SLIPWAY_APPLICATION_ID or "applicationId" in .slipway.json.
  --write <file>      merge the variables into an env file (e.g. .env): existing keys are
                      replaced in place, new ones appended; nothing is printed

${CONNECTION_USAGE}`;

export async function authCommand(sub: string | undefined, args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...CONNECTION_OPTIONS, application: { type: 'string' }, write: { type: 'string' } });
  if (values.help || !sub) {
    io.out.write(`${AUTH_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  if (sub !== 'enable' && sub !== 'env') throw new UsageError(`unknown command: auth ${sub}\n\n${AUTH_USAGE}`);
  if (positionals.length) throw new UsageError(`auth ${sub} takes no arguments`);
  if (sub === 'enable' && values.write) throw new UsageError('--write belongs to auth env');
  const config = resolveConfig(values, env, process.cwd());
  if (!config.token) throw new UsageError('no owner token: pass --token, set SLIPWAY_TOKEN, or put "token" in .slipway.json');
  if (!config.applicationId) throw new UsageError('no application: pass --application, set SLIPWAY_APPLICATION_ID, or put "applicationId" in .slipway.json');
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  const request = { bearer: config.token, query: { applicationId: config.applicationId } };

  if (sub === 'enable') {
    const service = await client.json<Record<string, unknown>>('POST', '/api/v1/auth', request);
    if (terminal.json) io.out.write(`${terminalJson(service)}\n`);
    else {
      const url = service['baseUrl'] ?? service['url'] ?? service['SERVICE_AUTH_BASE_URL'];
      io.out.write(`${terminal.paint.green('✓')} Sign-in is on${typeof url === 'string' ? ` at ${terminal.paint.cyan(visibleControls(url))}` : ''}\n`);
      io.out.write('Get its variables with: slipway auth env --write .env\n');
    }
    return 0;
  }

  const text = await client.text('GET', '/api/v1/auth/env', request);
  if (!values.write) {
    // Holds the cookie secret: printed only when asked for, never in a summary.
    io.out.write(visibleControls(text.endsWith('\n') ? text : `${text}\n`));
    return 0;
  }
  const path = resolve(values.write);
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  const merged = mergeEnvFile(existing ?? '', text);
  await writeFile(path, merged.text, { mode: 0o600 });
  if (existing === null) await chmod(path, 0o600);
  const summary = { file: path, added: merged.added, replaced: merged.replaced };
  if (terminal.json) io.out.write(`${terminalJson(summary)}\n`);
  else
    io.out.write(
      `${terminal.paint.green('✓')} ${visibleControls(`${path}: ${merged.added.length} added, ${merged.replaced.length} replaced (${[...parseEnvLines(text).keys()].join(', ')})`)}\n`,
    );
  return 0;
}
