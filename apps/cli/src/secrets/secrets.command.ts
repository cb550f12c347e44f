import { terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { createTerminal, type Terminal } from '../output/terminal.js';
import { OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';

export const SECRETS_USAGE = `Usage: slipway secrets set NAME=value... | unset NAME... | list   [--preview | --production] [--json] [--verbose]

Environment variables of the application the API key belongs to. Values are never shown again:
list prints names only. Names are upper case: ^[A-Z_][A-Z0-9_]*$.
  --preview      set (or unset) the value previews get (slipway deploy --preview); it wins
                 over the value for both there
  --production   set (or unset) the value production gets; it wins over the value for both
Without either, a value is for both production and previews, and unset removes the name in
every scope. list with either flag (or --json) shows each name's scopes. The scoped forms use
the owners' API: the project API key, or --token with --application.

${CONNECTION_USAGE}`;

const NAME = /^[A-Z_][A-Z0-9_]*$/;

export async function secretsCommand(sub: string | undefined, args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...CONNECTION_OPTIONS,
    preview: { type: 'boolean', default: false },
    production: { type: 'boolean', default: false },
    application: { type: 'string' },
  });
  if (values.preview && values.production)
    throw new UsageError('--preview and --production name one scope each: give one (without either, a value is for both)');
  const scope = values.preview ? 'preview' : values.production ? 'production' : undefined;
  if (values.help || !sub) {
    io.out.write(`${SECRETS_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = resolveConfig(values, env, process.cwd());
  const apiKey = config.apiKey;
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  let body: { secrets: Record<string, string | null> } | undefined;
  switch (sub) {
    case 'list':
      if (positionals.length) throw new UsageError('secrets list takes no arguments');
      break;
    case 'set':
      body = { secrets: Object.fromEntries(positionals.map(parseAssignment)) };
      if (!positionals.length) throw new UsageError(`secrets set needs NAME=value\n\n${SECRETS_USAGE}`);
      break;
    case 'unset':
      if (!positionals.length) throw new UsageError(`secrets unset needs NAME\n\n${SECRETS_USAGE}`);
      body = { secrets: Object.fromEntries(positionals.map((name) => [checkName(name), null])) };
      break;
    default:
      throw new UsageError(`unknown command: secrets ${sub}\n\n${SECRETS_USAGE}`);
  }
  const client = new ApiClient(config.url);
  if (scope) return scopedSecrets(client, ownersCredential(config), config.applicationId, sub, body, scope, terminal, io);
  if (!apiKey) throw new UsageError('no API key: pass --api-key, set SLIPWAY_API_KEY, or put "apiKey" in .slipway.json');
  const { names } = body
    ? await client.json<{ names: string[] }>('PUT', '/api/v1/secrets', { bearer: apiKey, body })
    : await client.json<{ names: string[] }>('GET', '/api/v1/secrets', { bearer: apiKey });
  if (terminal.json) {
    io.out.write(`${terminalJson({ names })}\n`);
    return 0;
  }
  if (sub === 'set') io.out.write(`${terminal.paint.green('✓')} Set ${Object.keys(body!.secrets).join(', ')}; takes effect on the next deploy\n`);
  if (sub === 'unset') io.out.write(`${terminal.paint.green('✓')} Removed ${Object.keys(body!.secrets).join(', ')}; takes effect on the next deploy\n`);
  if (sub === 'list') io.out.write(names.length ? visibleControls(`${names.join('\n')}\n`) : `${terminal.paint.dim('no secrets set')}\n`);
  return 0;
}

/** The owners' API's secrets: values of one scope, and names with their scopes. */
async function scopedSecrets(
  client: ApiClient,
  bearer: string,
  named: string | undefined,
  sub: string,
  body: { secrets: Record<string, string | null> } | undefined,
  scope: string | undefined,
  terminal: Terminal,
  io: CommandIo,
): Promise<number> {
  const applicationId = await resolveApplication(client, bearer, named);
  const path = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/secrets${scope ? `?scope=${scope}` : ''}`;
  const result = body
    ? await client.json<{ names: string[] }>('PUT', path, { bearer, body })
    : await client.json<{ names: string[]; secrets: { name: string; scopes: string[] }[] }>('GET', path, { bearer });
  if (terminal.json) {
    io.out.write(`${terminalJson(result)}\n`);
    return 0;
  }
  const where = scope === 'preview' ? 'previews' : 'production';
  if (sub === 'set')
    io.out.write(
      `${terminal.paint.green('✓')} Set ${Object.keys(body!.secrets).join(', ')} for ${where}; takes effect on the next deploy${scope === 'preview' ? ' of a preview' : ''}\n`,
    );
  if (sub === 'unset')
    io.out.write(`${terminal.paint.green('✓')} Removed the ${where} value of ${Object.keys(body!.secrets).join(', ')}; takes effect on the next deploy\n`);
  if (sub === 'list') {
    const secrets = (result as { secrets?: { name: string; scopes: string[] }[] }).secrets ?? [];
    io.out.write(
      secrets.length
        ? visibleControls(
            `${secrets.map((s) => `${s.name}  ${terminal.paint.dim(s.scopes.map((x) => (x === 'all' ? 'production+preview' : x)).join(', '))}`).join('\n')}\n`,
          )
        : `${terminal.paint.dim('no secrets set')}\n`,
    );
  }
  return 0;
}

function parseAssignment(argument: string): [string, string] {
  const at = argument.indexOf('=');
  if (at <= 0) throw new UsageError(`expected NAME=value, got "${argument.split('=')[0]!.slice(0, 64)}…"`);
  return [checkName(argument.slice(0, at)), argument.slice(at + 1)];
}

function checkName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`not a secret name: "${name.slice(0, 64)}" (upper case letters, digits and _, not starting with a digit)`);
  return name;
}
