import { visibleControls } from '@slipway/contract';
import { UsageError } from '../args.js';
import type { CliConfig } from '../config.js';
import type { ApiClient } from './api-client.js';

/** The owners' API (docs/reference/owners-api.md); the CLI reaches it with the project API key or the owner token. */
export const OWNERS_API = '/dashboard/api';

/** How the owners'-API commands (releases, rollback, promote, logs, metrics) authenticate, for their usage text. */
export const CREDENTIALS = `Authenticates with the project API key (--api-key, SLIPWAY_API_KEY: its own application)
or the owner token (--token, SLIPWAY_TOKEN: any of the owner's applications; name it with
--application, SLIPWAY_APPLICATION_ID or "applicationId" in .slipway.json when there are several).`;

/** The bearer for the owners' API: the project API key first, else the owner token. */
export function ownersCredential(config: Pick<CliConfig, 'apiKey' | 'token'>): string {
  const bearer = config.apiKey ?? config.token;
  if (!bearer) throw new UsageError('no credential: pass --api-key (or set SLIPWAY_API_KEY), or --token (SLIPWAY_TOKEN)');
  return bearer;
}

/**
 * The application a command is about: the one named (--application / SLIPWAY_APPLICATION_ID /
 * .slipway.json), else the one the credential reaches — a project API key reaches exactly its
 * own, an owner token all the owner's (then it must be named when there are several).
 * Takes the name rather than the whole config: deploy's live output resolves it from its own options.
 */
export async function resolveApplication(client: ApiClient, bearer: string, named: string | undefined): Promise<string> {
  if (named) return named;
  const { applications } = await client.json<{ applications: { id: string; slug: string }[] }>('GET', `${OWNERS_API}/applications`, { bearer });
  if (applications.length === 1) return applications[0]!.id;
  if (applications.length === 0) throw new UsageError('this credential reaches no application');
  const names = applications.map((a) => `${a.slug} (${a.id})`).join(', ');
  throw new UsageError(visibleControls(`the token reaches several applications: pass --application <id> (one of ${names})`));
}
