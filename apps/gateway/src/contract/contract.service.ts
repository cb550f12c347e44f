import { Inject, Injectable } from '@nestjs/common';
import { DEPLOY_FAILURE_CODES, ERROR_CODES, LIMITS, documentationUrl, type ErrorCode } from '@slipway/contract';
import { z } from 'zod';
import { GATEWAY_CONFIG, ownerSignInLimits, uploadLimits, type GatewayConfig } from '../config.js';
import { API_ENDPOINTS, type ApiEndpoint } from './api-endpoints.js';
import { ErrorBody } from './api-schemas.js';

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' });

/** Builds `GET /api/v1` and the OpenAPI document from the schemas, codes and limits in force. */
@Injectable()
export class ContractService {
  private readonly contract: Record<string, unknown>;
  private readonly openApi: Record<string, unknown>;

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.contract = this.buildContract();
    this.openApi = this.buildOpenApi();
  }

  describe(): Record<string, unknown> {
    return this.contract;
  }

  openApiDocument(): Record<string, unknown> {
    return this.openApi;
  }

  limits() {
    return {
      deploysPerHourPerApplication: LIMITS.deploysPerHourPerApplication,
      concurrentDeploysPerApplication: LIMITS.concurrentDeploysPerApplication,
      upload: uploadLimits(this.config),
      secrets: LIMITS.secrets,
      /** The dashboard's owner sign-in (not part of this API, but its error codes are in the catalogue). */
      ownerSignIn: ownerSignInLimits(this.config),
      ownerPassword: LIMITS.ownerPassword,
      databasesPerPlan: LIMITS.databasesPerPlan,
      /** Bytes an owner may store (sources in progress + kept releases' artifacts); over it: `storage_quota_exceeded`. */
      storagePerPlan: this.config.STORAGE_QUOTAS,
      releasesKeptPerApplication: this.config.RELEASES_KEPT,
    };
  }

  private buildContract(): Record<string, unknown> {
    return {
      name: 'Slipway deployment API',
      version: 'v1',
      baseUrl: `${this.config.PUBLIC_URL}/api/v1`,
      openApi: `${this.config.PUBLIC_URL}/api/v1/openapi.json`,
      /** Everything beyond this contract (releases, rollback, domains, …): a separate API, not part of v1's surface. */
      ownersApi: {
        openApi: `${this.config.PUBLIC_URL}/dashboard/api/openapi.json`,
        description: "The owners' API (dashboard and CLI): dashboard session, personal access token, or project API key (its own application only).",
      },
      authentication:
        "Every endpoint except GET /api/v1 and GET /api/v1/openapi.json needs `Authorization: Bearer <project API key>` (slw_key_…), scoped to one application. The sign-in calls (/api/v1/auth…) also accept the owner's personal access token (slw_pat_…).",
      endpoints: API_ENDPOINTS.map((e) => ({
        method: e.method,
        path: e.path,
        summary: e.summary,
        auth: e.auth === 'owner-or-key' ? 'owner personal access token or project API key (Bearer)' : e.auth ? 'project API key (Bearer)' : 'none',
        ...(e.pathParams ? { pathParams: Object.fromEntries(Object.entries(e.pathParams).map(([k, s]) => [k, jsonSchema(s)])) } : {}),
        ...(e.queryParams ? { queryParams: Object.fromEntries(Object.entries(e.queryParams).map(([k, s]) => [k, jsonSchema(s)])) } : {}),
        ...(e.request ? { request: { contentType: e.request.contentType, schema: jsonSchema(e.request.schema) } } : {}),
        response: {
          status: e.response.status,
          ...(e.response.alsoStatus ? { alsoStatus: e.response.alsoStatus } : {}),
          contentType: e.response.contentType,
          ...(e.response.schema ? { schema: jsonSchema(e.response.schema) } : {}),
        },
        errors: e.errors.map((code) => ({ code, status: ERROR_CODES[code].status })),
      })),
      errors: {
        body: jsonSchema(ErrorBody),
        codes: Object.entries(ERROR_CODES).map(([code, { status, meaning }]) => ({
          code,
          status,
          meaning,
          documentation: documentationUrl(this.config.PUBLIC_URL, code as ErrorCode),
        })),
      },
      limits: this.limits(),
      /** Why a deployment failed: `error.code` of GET /api/v1/deployments/{taskId} (the build worker's limits among them). */
      deploymentFailures: Object.entries(DEPLOY_FAILURE_CODES).map(([code, meaning]) => ({ code, meaning })),
    };
  }

  private buildOpenApi(): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const endpoint of API_ENDPOINTS) {
      paths[endpoint.path] ??= {};
      paths[endpoint.path]![endpoint.method.toLowerCase()] = this.operation(endpoint);
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'Slipway deployment API',
        version: '1',
        description: 'Deploy a project and poll its task until `succeeded` or `failed`.',
        'x-limits': this.limits(),
      },
      servers: [{ url: this.config.PUBLIC_URL }],
      paths,
      components: {
        securitySchemes: {
          projectApiKey: { type: 'http', scheme: 'bearer', description: 'Project API key (slw_key_…), scoped to one application.' },
          ownerToken: { type: 'http', scheme: 'bearer', description: "The owner's personal access token (slw_pat_…): every application of the owner." },
        },
        schemas: { Error: jsonSchema(ErrorBody) },
      },
    };
  }

  private operation(endpoint: ApiEndpoint): Record<string, unknown> {
    const success = { content: { [endpoint.response.contentType]: endpoint.response.schema ? { schema: jsonSchema(endpoint.response.schema) } : {} } };
    const responses: Record<string, unknown> = { [endpoint.response.status]: { description: 'Success', ...success } };
    if (endpoint.response.alsoStatus) responses[endpoint.response.alsoStatus] = { description: 'Success (already done)', ...success };
    for (const code of endpoint.errors) {
      const status = String(ERROR_CODES[code].status);
      const existing = responses[status] as { description: string } | undefined;
      const description = existing ? `${existing.description}, ${code}` : `Error: ${code}`;
      responses[status] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    return {
      summary: endpoint.summary,
      security: endpoint.auth === 'owner-or-key' ? [{ ownerToken: [] }, { projectApiKey: [] }] : endpoint.auth ? [{ projectApiKey: [] }] : [],
      ...(endpoint.pathParams || endpoint.queryParams
        ? {
            parameters: [
              ...Object.entries(endpoint.pathParams ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema: jsonSchema(schema) })),
              ...Object.entries(endpoint.queryParams ?? {}).map(([name, schema]) => ({ name, in: 'query', required: true, schema: jsonSchema(schema) })),
            ],
          }
        : {}),
      ...(endpoint.request
        ? { requestBody: { required: true, content: { [endpoint.request.contentType]: { schema: jsonSchema(endpoint.request.schema) } } } }
        : {}),
      responses,
    };
  }
}
