import { ApplicationsRepository, PREVIEW_NAME_PATTERN, type ApplicationId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import type { OwnedApplication } from '../owners/index.js';

/**
 * The application a day-two read is about: `app` itself, or with `?preview=<name>` its preview
 * of that name (logs and metrics are kept per application, and a preview is one). A preview of
 * another application does not exist here (404, as any other).
 */
export async function applicationOrPreview(applications: ApplicationsRepository, app: OwnedApplication, preview: unknown): Promise<ApplicationId> {
  if (preview === undefined) return app.id;
  const found = typeof preview === 'string' && PREVIEW_NAME_PATTERN.test(preview) ? await applications.previews.find(app.id, preview) : null;
  if (!found) throw new ApiException('not_found', `This application has no preview named ${String(preview).slice(0, 64)}.`);
  return found.id;
}
