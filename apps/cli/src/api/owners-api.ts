import { visibleControls } from '@slipway/contract';
import { UsageError } from '../args.js';
import type { ApiClient } from './api-client.js';

/** The owners' API (README "The owners' API"); the CLI reaches it with the project API key or the owner token. */
export const OWNERS_API = '/dashboard/api';

/**
 * The application a command is about: the one named (--application / SLIPWAY_APPLICATION_ID /
 * .slipway.json), else the one the credential reaches — a project API key reaches exactly its
 * own, an owner token all the owner's (then it must be named when there are several).
 */
export async function resolveApplication(client: ApiClient, bearer: string, named: string | undefined): Promise<string> {
  if (named) return named;
  const { applications } = await client.json<{ applications: { id: string; slug: string }[] }>('GET', `${OWNERS_API}/applications`, { bearer });
  if (applications.length === 1) return applications[0]!.id;
  if (applications.length === 0) throw new UsageError('this credential reaches no application');
  const names = applications.map((a) => `${a.slug} (${a.id})`).join(', ');
  throw new UsageError(visibleControls(`the token reaches several applications: pass --application <id> (one of ${names})`));
}
