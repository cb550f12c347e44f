import { Injectable, Logger } from '@nestjs/common';
import { LIMITS } from '@slipway/contract';
import { encryptEnvelope, envelopeBinding, type Keyring } from '@slipway/crypto';
import { PlatformInfrastructure, SECRET_SCOPES, SecretsRepository, TooManySecretsError, type ApplicationId, type SecretScope } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { PutSecretsBody } from '../contract/index.js';

/**
 * Environment variables of an application. Values are sealed (AES-256-GCM envelope bound to
 * application and name) before they reach the repository and are never returned or logged.
 */
@Injectable()
export class SecretsService {
  private readonly logger = new Logger('Secrets');
  private readonly keyring: Keyring;

  constructor(
    platform: PlatformInfrastructure,
    private readonly secrets: SecretsRepository,
  ) {
    this.keyring = platform.keyring;
  }

  async list(applicationId: ApplicationId): Promise<{ names: string[] }> {
    return { names: await this.secrets.names(applicationId) };
  }

  /** The owners' API's list: each name with the scopes it has a value in (`all`, `production`, `preview`). */
  async listScoped(applicationId: ApplicationId): Promise<{ names: string[]; secrets: { name: string; scopes: SecretScope[] }[] }> {
    const rows = await this.secrets.scopes(applicationId);
    const byName = new Map<string, SecretScope[]>();
    for (const row of rows) byName.set(row.name, [...(byName.get(row.name) ?? []), row.scope]);
    return { names: [...byName.keys()], secrets: [...byName].map(([name, scopes]) => ({ name, scopes })) };
  }

  /**
   * Sets (or with `null` deletes) values in `scope`: `all` (what `PUT /api/v1/secrets` sets;
   * deleting there removes the name in every scope), `production` or `preview` (an environment's
   * own value, which wins over `all` there).
   */
  async put(applicationId: ApplicationId, body: unknown, scopeParam?: string): Promise<{ names: string[] }> {
    const scope = secretScope(scopeParam);
    const parsed = PutSecretsBody.safeParse(body);
    if (!parsed.success) throw new ApiException('bad_request', describeProblem(parsed.error.issues));
    const entries = Object.entries(parsed.data.secrets);
    const { maxSecretsPerApplication, maxValueBytes } = LIMITS.secrets;
    if (entries.length > maxSecretsPerApplication) throw new ApiException('too_large', `Send at most ${maxSecretsPerApplication} secrets at once.`);
    const upserts = new Map<string, Uint8Array<ArrayBuffer>>();
    const deletes: string[] = [];
    for (const [name, value] of entries) {
      if (value === null) {
        deletes.push(name);
        continue;
      }
      if (Buffer.byteLength(value) > maxValueBytes) throw new ApiException('too_large', `The value of ${name} is larger than ${maxValueBytes} bytes.`);
      // An environment variable ends at its first NUL: the app could not be started with it.
      if (value.includes('\u0000'))
        throw new ApiException('bad_request', `The value of ${name} contains a NUL character (U+0000), which an environment variable cannot hold.`);
      upserts.set(name, new Uint8Array(encryptEnvelope(this.keyring, value, envelopeBinding.secret(applicationId, name, scope))));
    }
    try {
      const names = await this.secrets.apply(applicationId, upserts, deletes, maxSecretsPerApplication, scope);
      this.logger.log(`application ${applicationId}: ${upserts.size} secrets set, ${deletes.length} deleted (scope ${scope})`);
      return { names };
    } catch (error) {
      if (error instanceof TooManySecretsError) throw new ApiException('too_large', `An application holds at most ${maxSecretsPerApplication} secrets.`);
      throw error;
    }
  }
}

function secretScope(value: string | undefined): SecretScope {
  if (value === undefined) return 'all';
  if ((SECRET_SCOPES as readonly string[]).includes(value)) return value as SecretScope;
  throw new ApiException('bad_request', 'scope is "all" (the default: production and previews), "production" or "preview".');
}

/** Names the problem without echoing any value the client sent. */
function describeProblem(issues: { path: PropertyKey[]; code: string; message: string }[]): string {
  const issue = issues[0]!;
  if (issue.code === 'invalid_key') {
    return `Secret names must match ^[A-Z_][A-Z0-9_]*$ and be at most ${LIMITS.secrets.maxNameLength} characters.`;
  }
  if (issue.path[0] === 'secrets' && issue.path.length === 2) return `The value of ${String(issue.path[1]).slice(0, 128)} must be a string or null.`;
  if (issue.code === 'unrecognized_keys') return 'Send {"secrets": {"NAME": "value" | null}} and nothing else.';
  return 'Send {"secrets": {"NAME": "value" | null}}.';
}
