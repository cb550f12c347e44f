import { Injectable, Logger } from '@nestjs/common';
import { LIMITS } from '@slipway/contract';
import { encryptEnvelope, envelopeBinding, type Keyring } from '@slipway/crypto';
import { PlatformInfrastructure, SecretsRepository, TooManySecretsError, type ApplicationId } from '@slipway/platform-data';
import { ApiException } from '@slipway/server';
import { PutSecretsBody } from '../contract/api-schemas.js';

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

  async put(applicationId: ApplicationId, body: unknown): Promise<{ names: string[] }> {
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
      upserts.set(name, new Uint8Array(encryptEnvelope(this.keyring, value, envelopeBinding.secret(applicationId, name))));
    }
    try {
      const names = await this.secrets.apply(applicationId, upserts, deletes, maxSecretsPerApplication);
      this.logger.log(`application ${applicationId}: ${upserts.size} secrets set, ${deletes.length} deleted`);
      return { names };
    } catch (error) {
      if (error instanceof TooManySecretsError) throw new ApiException('too_large', `An application holds at most ${maxSecretsPerApplication} secrets.`);
      throw error;
    }
  }
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
