import type { ErrorCode } from '@slipway/contract';
import type { z } from 'zod';
import {
  ApplicationIdQuery,
  DeployAccepted,
  DeployRequest,
  DeploymentTask,
  PutSecretsBody,
  SecretNames,
  SignInEnvText,
  SignInServiceRecord,
  SignInServices,
  TaskId,
} from './api-schemas.js';

export interface ApiEndpoint {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  summary: string;
  /** false: no key needed; true: a project API key; 'owner-or-key': the owner's token or the application's project API key. */
  auth: boolean | 'owner-or-key';
  pathParams?: Record<string, z.ZodType>;
  queryParams?: Record<string, z.ZodType>;
  request?: { contentType: 'multipart/form-data' | 'application/json'; schema: z.ZodType };
  response: { status: number; contentType: 'application/json' | 'text/plain'; schema?: z.ZodType; alsoStatus?: number };
  errors: ErrorCode[];
}

const ALWAYS: ErrorCode[] = ['internal'];
const KEYED: ErrorCode[] = ['unauthorized', ...ALWAYS];

/** Every endpoint under /api/v1: the contract's whole surface. */
export const API_ENDPOINTS: ApiEndpoint[] = [
  {
    method: 'GET',
    path: '/api/v1',
    summary: 'This machine-readable contract: endpoints, request and response shapes, error codes and the limits in force.',
    auth: false,
    response: { status: 200, contentType: 'application/json' },
    errors: ALWAYS,
  },
  {
    method: 'GET',
    path: '/api/v1/openapi.json',
    summary: 'The same contract as an OpenAPI 3.1 document.',
    auth: false,
    response: { status: 200, contentType: 'application/json' },
    errors: ALWAYS,
  },
  {
    method: 'POST',
    path: '/api/v1/deploy',
    summary: 'Deploys the source tree. Answers at once with a task to poll; building and releasing take a minute or two.',
    auth: true,
    request: { contentType: 'multipart/form-data', schema: DeployRequest },
    response: { status: 202, contentType: 'application/json', schema: DeployAccepted },
    errors: [
      'empty',
      'bad_request',
      'bad_archive',
      'paths_mismatch',
      'too_large',
      'upload_stalled',
      'deploy_in_progress',
      'storage_quota_exceeded',
      'rate_limited',
      'too_many_uploads',
      'unavailable',
      ...KEYED,
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/deployments/{taskId}',
    summary: 'The deployment task; poll until `status` is `succeeded` or `failed`.',
    auth: true,
    pathParams: { taskId: TaskId },
    response: { status: 200, contentType: 'application/json', schema: DeploymentTask },
    errors: ['not_found', ...KEYED],
  },
  {
    method: 'PUT',
    path: '/api/v1/secrets',
    summary: 'Sets (string) or deletes (null) environment variables; answers with the names now set. Values are never returned.',
    auth: true,
    request: { contentType: 'application/json', schema: PutSecretsBody },
    response: { status: 200, contentType: 'application/json', schema: SecretNames },
    errors: ['bad_request', 'too_large', ...KEYED],
  },
  {
    method: 'GET',
    path: '/api/v1/secrets',
    summary: 'Names of the environment variables set; never values.',
    auth: true,
    response: { status: 200, contentType: 'application/json', schema: SecretNames },
    errors: KEYED,
  },
  {
    method: 'POST',
    path: '/api/v1/auth',
    summary:
      "Switches on the sign-in service for the application's end users: creates the application's database if it has none (counts against the plan), the service_auth schema, a cookie secret, signing keys and trusted origins. 201 when this call switched it on; repeating it (even concurrently) answers 200 with the same record.",
    auth: 'owner-or-key',
    queryParams: { applicationId: ApplicationIdQuery },
    response: { status: 201, alsoStatus: 200, contentType: 'application/json', schema: SignInServiceRecord },
    errors: ['bad_request', 'not_found', 'database_limit_reached', 'auth_owned_by_project', ...KEYED],
  },
  {
    method: 'GET',
    path: '/api/v1/auth/env',
    summary: 'The sign-in variables as text to append to .env. Holds the cookie secret. 404 while sign-in is off.',
    auth: 'owner-or-key',
    queryParams: { applicationId: ApplicationIdQuery },
    response: { status: 200, contentType: 'text/plain', schema: SignInEnvText },
    errors: ['bad_request', 'not_found', ...KEYED],
  },
  {
    method: 'GET',
    path: '/api/v1/auth',
    summary: "The sign-in services this token can see (all of the owner's, or the key's application), without secrets.",
    auth: 'owner-or-key',
    response: { status: 200, contentType: 'application/json', schema: SignInServices },
    errors: KEYED,
  },
];
