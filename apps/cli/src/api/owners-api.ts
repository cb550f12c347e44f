import { visibleControls } from '@slipway/contract';
import { UsageError } from '../args.js';
import type { CliConfig } from '../config.js';
import type { ApiClient } from './api-client.js';

/** The owners' API (README "The owners' API"); the CLI reaches it with the project API key or the owner token. */
export const OWNERS_API = '/dashboard/api';

export const CREDENTIALS = `Authenticates with the project API key (--api-key, SLIPWAY_API_KEY: its own application)
or the owner token (--token, SLIPWAY_TOKEN: any of the owner's applications; name it with
--application, SLIPWAY_APPLICATION_ID or "applicationId" in .slipway.json when there are several).`;

/** The bearer for the owners' API: the project API key first, else the owner token. */
export function ownersCredential(config: CliConfig): string {
  const bearer = config.apiKey ?? config.token;
  if (!bearer) throw new UsageError('no credential: pass --api-key (or set SLIPWAY_API_KEY), or --token (SLIPWAY_TOKEN)');
  return bearer;
}

/**
 * The application the command is about: --application / SLIPWAY_APPLICATION_ID / .slipway.json,
 * else the one the credential reaches (a project key reaches exactly one; a token, all the owner's).
 */
export async function resolveApplication(client: ApiClient, bearer: string, config: CliConfig): Promise<string> {
  if (config.applicationId) return config.applicationId;
  const { applications } = await client.json<{ applications: { id: string; slug: string }[] }>('GET', `${OWNERS_API}/applications`, { bearer });
  if (applications.length === 1) return applications[0]!.id;
  if (applications.length === 0) throw new UsageError('this credential reaches no application');
  const names = applications.map((a) => `${a.slug} (${a.id})`).join(', ');
  throw new UsageError(visibleControls(`the token reaches several applications: pass --application <id> (one of ${names})`));
}
