import {
  DEPLOY_STEPS as STEP_NAMES,
  ERROR_CODES,
  LIMITS,
  ROOT_DIRECTORY_MAX_LENGTH,
  ROOT_DIRECTORY_PATTERN,
  type DeploymentTask as ClientDeploymentTask,
  type ErrorCode,
} from '@slipway/contract';
import { z } from 'zod';

/**
 * The deployment API's shapes, once. The handlers validate with these and `GET /api/v1` /
 * `GET /api/v1/openapi.json` are generated from them, so the published contract cannot drift.
 */
export const SECRET_NAME = /^[A-Z_][A-Z0-9_]*$/;

export const ErrorBody = z
  .object({
    error: z.string().describe('Human-readable message; do not match on it.'),
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]).describe('Stable code; match on this.'),
    documentation: z.string().describe('URL back to the contract.'),
    taskId: z.uuid().nullable().optional().describe('deploy_in_progress: the in-flight task.'),
    retryAfterSeconds: z.number().int().positive().optional().describe('rate_limited: seconds until a deploy is accepted again.'),
    correlationId: z.string().optional().describe('internal: quote it when reporting the failure.'),
  })
  .meta({ title: 'Error' });

export const DeployRequest = z
  .object({
    files: z
      .array(z.string().meta({ format: 'binary' }))
      .optional()
      .describe('Repeated; each matched by one `paths` field in the same order.'),
    paths: z
      .array(z.string())
      .optional()
      .describe(
        'Relative `/`-separated path of the file in the same position: no leading `/`, `..`, `.`, `\\`, empty segment, NUL or control character; unique after Unicode NFC + case folding.',
      ),
    archive: z
      .string()
      .meta({ format: 'binary' })
      .optional()
      .describe('One zip, tar or tar.gz (recognised by content). Only regular files and directories; no links, devices or FIFOs.'),
    rootDirectory: z
      .string()
      .regex(ROOT_DIRECTORY_PATTERN)
      .optional()
      .describe(
        `Optional, at most once, before or after the files: the directory of the source that holds the application to build, as Vercel's "Root Directory" (a monorepo's \`apps/web\`); it wins over \`rootDirectory\` in slipway.json. Relative, \`/\`-separated segments of letters, digits and \`._@+-\`, no \`.\` or \`..\` segment, at most ${ROOT_DIRECTORY_MAX_LENGTH} characters; one trailing \`/\` is trimmed. Anything else: 400 \`bad_request\`. A directory the source does not have fails the deployment's analyze step.`,
      ),
  })
  .meta({
    title: 'DeployRequest',
    description: 'multipart/form-data: either `files` + `paths`, or one `archive`, never both; optionally one `rootDirectory`.',
  });

export const DeployAccepted = z.object({ taskId: z.uuid(), status: z.literal('queued') }).meta({ title: 'DeployAccepted' });

export const TaskId = z.uuid();

export const DeploymentStatus = z.enum(['queued', 'building', 'releasing', 'succeeded', 'failed']);

export const Step = z.object({
  name: z.enum(STEP_NAMES),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  startedAt: z.iso.datetime().nullable(),
  finishedAt: z.iso.datetime().nullable(),
  durationMs: z.number().int().nullable(),
  log: z.string().describe('Redacted tail of the step log.'),
});

const Finding = z.object({ code: z.string(), message: z.string() }).catchall(z.unknown());

export const DeploymentTask = z
  .object({
    taskId: z.uuid(),
    status: DeploymentStatus.describe('Polling ends at `succeeded` or `failed`.'),
    steps: z.array(Step),
    spec: z.record(z.string(), z.unknown()).nullable().describe('Description of the deployed project, once analysed.'),
    warnings: z.array(Finding).describe('Things that went wrong or may surprise, without failing the deploy.'),
    hazards: z.array(Finding).describe('Risks the deploy may carry although it succeeded.'),
    url: z.url().optional().describe('Once succeeded: where the application answers.'),
    error: z
      .object({
        code: z.string().describe('Stable code: one of `deploymentFailures` in GET /api/v1 (e.g. build_memory_exceeded, build_too_many_processes).'),
        message: z.string(),
        step: z.string().nullable(),
      })
      .optional()
      .describe('Once failed.'),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    queuedSeconds: z
      .number()
      .min(0)
      .optional()
      .describe('Seconds the deployment waited in the build queue: from acceptance to the start of its build (so far, while it is still queued).'),
  })
  .meta({ title: 'DeploymentTask' });

export const PutSecretsBody = z
  .strictObject({
    secrets: z
      .record(z.string().max(LIMITS.secrets.maxNameLength).regex(SECRET_NAME), z.string().nullable())
      .describe('NAME → value upserts; NAME → null deletes.'),
  })
  .meta({ title: 'PutSecrets' });

export const SecretNames = z
  .object({ names: z.array(z.string()).describe('Names now set, sorted; values are never returned.') })
  .meta({ title: 'SecretNames' });

export type DeploymentTask = z.infer<typeof DeploymentTask>;

/**
 * The task as served (this schema) and as clients read it (`DeploymentTask` in @slipway/contract)
 * are one shape: the same fields, and whatever the gateway serves type-checks as what clients read
 * (theirs is wider on purpose: step names and codes are plain strings). Either side drifting
 * fails the build here.
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
const servedTaskIsReadTask: [DeploymentTask extends ClientDeploymentTask ? true : false, SameKeys<DeploymentTask, ClientDeploymentTask>] = [true, true];
void servedTaskIsReadTask;
export type PutSecretsBody = z.infer<typeof PutSecretsBody>;

export const ApplicationIdQuery = z.uuid().describe('The application (its id, as in the dashboard or .slipway.json).');

export const SignInServiceRecord = z
  .object({
    applicationId: z.uuid(),
    baseUrl: z.string().describe('{auth_url}: SERVICE_AUTH_BASE_URL and VITE_SERVICE_AUTH_URL.'),
    jwksUrl: z.string().describe('SERVICE_AUTH_JWKS_URL: the public keys that verify its JWTs.'),
    trustedOrigins: z.array(z.string()).describe('Origins allowed to call it (the app address, publishing domains, verified custom domains).'),
    settings: z.object({
      emailAndPassword: z.boolean(),
      requireEmailVerification: z.boolean(),
      allowLocalhost: z.boolean().describe('Any http://localhost:<port> origin is allowed too.'),
      socialProviders: z.array(z.string()).describe("Providers set up with the owner's OAuth apps (names only)."),
    }),
    createdAt: z.iso.datetime(),
  })
  .meta({ title: 'SignInService' });

export const SignInServices = z.object({ services: z.array(SignInServiceRecord) }).meta({ title: 'SignInServices' });

export const SignInEnvText = z
  .string()
  .describe('SERVICE_AUTH_BASE_URL, SERVICE_AUTH_COOKIE_SECRET, SERVICE_AUTH_JWKS_URL and VITE_SERVICE_AUTH_URL as NAME=value lines, ready to append to .env.');
