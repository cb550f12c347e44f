import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from '@slipway/config';
import { UsageError } from './args.js';

export const DEFAULT_URL = 'http://localhost:3000';
export const PROJECT_FILE = '.slipway.json';

/** What `.slipway.json` in the project folder may hold (every field optional). */
const projectFileSchema = z.strictObject({
  url: z.url().optional(),
  apiKey: z.string().min(1).optional(),
  token: z.string().min(1).optional(),
  applicationId: z.string().min(1).optional(),
});

export interface ConnectionFlags {
  url?: string;
  'api-key'?: string;
  token?: string;
  application?: string;
}

export interface CliConfig {
  url: string;
  apiKey?: string;
  token?: string;
  applicationId?: string;
  /** Poll interval while following a deployment (SLIPWAY_POLL_INTERVAL_MS, default 1000). */
  pollIntervalMs: number;
  /** NO_COLOR (https://no-color.org) turns colours off even on a terminal. */
  noColor: boolean;
}

/**
 * The CLI's only reading of the environment. Precedence: flags, then SLIPWAY_URL /
 * SLIPWAY_API_KEY / SLIPWAY_TOKEN / SLIPWAY_APPLICATION_ID, then `.slipway.json` in the project
 * folder, then the default URL.
 */
export function resolveConfig(flags: ConnectionFlags, env: NodeJS.ProcessEnv, projectDir: string): CliConfig {
  const file = readProjectFile(projectDir);
  const url = (flags.url ?? nonEmpty(env['SLIPWAY_URL']) ?? file.url ?? DEFAULT_URL).replace(/\/+$/, '');
  if (!z.url({ protocol: /^https?$/ }).safeParse(url).success) throw new UsageError(`not an http(s) URL: ${url} (from --url, SLIPWAY_URL or ${PROJECT_FILE})`);
  const poll = Number(env['SLIPWAY_POLL_INTERVAL_MS'] ?? 1000);
  return {
    url,
    apiKey: flags['api-key'] ?? nonEmpty(env['SLIPWAY_API_KEY']) ?? file.apiKey,
    token: flags.token ?? nonEmpty(env['SLIPWAY_TOKEN']) ?? file.token,
    applicationId: flags.application ?? nonEmpty(env['SLIPWAY_APPLICATION_ID']) ?? file.applicationId,
    pollIntervalMs: Number.isFinite(poll) && poll >= 50 ? poll : 1000,
    noColor: Boolean(nonEmpty(env['NO_COLOR'])),
  };
}

export function readProjectFile(projectDir: string): z.infer<typeof projectFileSchema> {
  const path = join(projectDir, PROJECT_FILE);
  if (!existsSync(path)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${path} is not valid JSON (${(error as Error).message})`);
  }
  const parsed = projectFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`${path}: ${issue.path.join('.') || 'file'}: ${issue.message} (allowed: url, apiKey, token, applicationId)`);
  }
  return parsed.data;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value ? value : undefined;
}

/** Flags every API command accepts. */
export const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  token: { type: 'string' },
  verbose: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const CONNECTION_USAGE = `Connection (flags win over the environment, which wins over ${PROJECT_FILE}):
  --url <url>         platform address (SLIPWAY_URL, default ${DEFAULT_URL})
  --api-key <key>     project API key (SLIPWAY_API_KEY)
  --token <token>     owner token, for auth commands (SLIPWAY_TOKEN)
  --json              one JSON document on stdout (automatic when stdout is not a terminal)
  --verbose           details: HTTP status, documentation link, full error body`;
