import { DEPLOY_FAILURE_CODES, ERROR_CODES, LIMITS, ROOT_DIRECTORY_PATTERN } from '@slipway/contract';
import { send } from './support/http.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

describe('GET /api/v1 and /api/v1/openapi.json (generated from the validating schemas)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway('contract', { UPLOAD_MAX_BYTES: String(64 * 1024 * 1024) });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('describes exactly the deployment API surface, every error code and the limits in force', async () => {
    const response = await send(`${gw.url}/api/v1`);
    expect(response.status).toBe(200);
    const contract = response.json;
    expect(contract.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`)).toEqual([
      'GET /api/v1',
      'GET /api/v1/openapi.json',
      'POST /api/v1/deploy',
      'GET /api/v1/deployments/{taskId}',
      'PUT /api/v1/secrets',
      'GET /api/v1/secrets',
      'POST /api/v1/auth',
      'GET /api/v1/auth/env',
      'GET /api/v1/auth',
    ]);
    expect(contract.errors.codes).toEqual(
      Object.entries(ERROR_CODES).map(([code, { status, meaning }]) => ({
        code,
        status,
        meaning,
        documentation: `http://localhost:3000/api/v1#error-${code}`,
      })),
    );
    expect(contract.errors.body.required).toEqual(['error', 'code', 'documentation']);
    expect(contract.limits).toEqual({
      deploysPerHourPerApplication: 20,
      concurrentDeploysPerApplication: 1,
      upload: { ...LIMITS.upload, maxUploadBytes: 64 * 1024 * 1024 },
      secrets: LIMITS.secrets,
      ownerSignIn: LIMITS.ownerSignIn,
      ownerPassword: { minLength: 10, maxBytes: 72 },
      databasesPerPlan: { free: 1, go: 1, pro: 3, scale: 5 },
      storagePerPlan: LIMITS.storagePerPlan,
      releasesKeptPerApplication: 10,
    });
    // Why a deployment fails (its task's error.code), the build limits' codes among them.
    expect(contract.deploymentFailures).toEqual(Object.entries(DEPLOY_FAILURE_CODES).map(([code, meaning]) => ({ code, meaning })));
    expect(contract.deploymentFailures.map((f: { code: string }) => f.code)).toEqual(
      expect.arrayContaining(['sandbox_unavailable', 'build_memory_exceeded', 'build_too_many_processes']),
    );
    const deploy = contract.endpoints.find((e: { path: string }) => e.path === '/api/v1/deploy');
    expect(deploy.request.contentType).toBe('multipart/form-data');
    expect(Object.keys(deploy.request.schema.properties)).toEqual(['files', 'paths', 'archive', 'rootDirectory']);
    expect(deploy.request.schema.properties.rootDirectory).toMatchObject({ type: 'string', pattern: ROOT_DIRECTORY_PATTERN.source });
    expect(deploy.response).toMatchObject({ status: 202, schema: { properties: { taskId: { type: 'string', format: 'uuid' }, status: { const: 'queued' } } } });
    expect(deploy.errors.map((e: { code: string }) => e.code)).toEqual(
      expect.arrayContaining([
        'empty',
        'bad_request',
        'bad_archive',
        'paths_mismatch',
        'too_large',
        'upload_stalled',
        'unauthorized',
        'deploy_in_progress',
        'storage_quota_exceeded',
        'rate_limited',
        'too_many_uploads',
      ]),
    );
    const secrets = contract.endpoints.find((e: { method: string; path: string }) => e.method === 'PUT' && e.path === '/api/v1/secrets');
    expect(secrets.request.schema.properties.secrets.propertyNames).toMatchObject({ pattern: '^[A-Z_][A-Z0-9_]*$', maxLength: 128 });
    const poll = contract.endpoints.find((e: { path: string }) => e.path === '/api/v1/deployments/{taskId}');
    expect(poll.response.schema.required).toEqual(expect.arrayContaining(['taskId', 'status', 'steps', 'spec', 'warnings', 'hazards']));
  });

  it('serves the same contract as OpenAPI 3.1', async () => {
    const response = await send(`${gw.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const doc = response.json;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual([
      '/api/v1',
      '/api/v1/openapi.json',
      '/api/v1/deploy',
      '/api/v1/deployments/{taskId}',
      '/api/v1/secrets',
      '/api/v1/auth',
      '/api/v1/auth/env',
    ]);
    expect(doc.paths['/api/v1/auth'].post.security).toEqual([{ ownerToken: [] }, { projectApiKey: [] }]);
    expect(Object.keys(doc.paths['/api/v1/auth'].post.responses).sort()).toEqual(['200', '201', '400', '401', '403', '404', '409', '500']);
    expect(doc.paths['/api/v1/auth/env'].get.responses['200'].content).toHaveProperty(['text/plain']);
    expect(Object.keys(doc.paths['/api/v1/secrets'])).toEqual(['put', 'get']);
    const deploy = doc.paths['/api/v1/deploy'].post;
    expect(deploy.security).toEqual([{ projectApiKey: [] }]);
    expect(Object.keys(deploy.responses).sort()).toEqual(['202', '400', '401', '408', '409', '413', '429', '500', '503']);
    expect(deploy.responses['413'].description).toBe('Error: storage_quota_exceeded');
    expect(deploy.requestBody.content['multipart/form-data'].schema.properties.archive).toMatchObject({ type: 'string', format: 'binary' });
    expect(doc.paths['/api/v1'].get.security).toEqual([]);
    expect(doc.components.securitySchemes.projectApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
