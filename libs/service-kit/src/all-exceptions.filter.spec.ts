import { BadRequestException, Controller, Get, Module, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { ApiException } from './api.exception.js';
import { startHttpApp } from './bootstrap.js';

@Controller()
class ProbeController {
  @Get('coded')
  coded() {
    throw new ApiException('deploy_in_progress', 'A deploy is already running for this application.', { taskId: 't-1' });
  }

  @Get('limited')
  limited() {
    throw new ApiException('rate_limited', 'Too many deploys.', { retryAfterSeconds: 42 }, { 'Retry-After': '42' });
  }

  @Get('missing')
  missing() {
    throw new NotFoundException('nothing here');
  }

  @Get('too-large')
  tooLarge() {
    throw new PayloadTooLargeException('request entity too large');
  }

  @Get('bad-json')
  badJson() {
    throw new BadRequestException('Unexpected token \'s\', "s3cret-value" is not valid JSON', { cause: new SyntaxError('Unexpected token') });
  }

  @Get('restarting')
  async restarting() {
    // What node-postgres throws while the server restarts (its own message names the address).
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  }

  @Get('boom')
  boom() {
    throw new Error('database password is hunter2');
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('AllExceptionsFilter over real HTTP', () => {
  let app: INestApplication;
  let url: string;
  const logged: string[] = [];
  const originalWrite = process.stdout.write.bind(process.stdout);
  const originalErr = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    app = await startHttpApp({ name: 'probe', module: ProbeModule, port: 0, host: '127.0.0.1', logLevel: 'error', baseUrl: 'http://platform.test' });
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const capture = (chunk: unknown) => (logged.push(String(chunk)), true);
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
  });
  afterAll(async () => {
    process.stdout.write = originalWrite;
    process.stderr.write = originalErr;
    await app.close();
  });

  it('maps a domain exception to its status and {error, code, documentation} plus extras', async () => {
    const response = await fetch(`${url}/coded`);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      error: 'A deploy is already running for this application.',
      code: 'deploy_in_progress',
      documentation: 'http://platform.test/api/v1#error-deploy_in_progress',
      taskId: 't-1',
    });
  });

  it('sets headers a domain exception asks for', async () => {
    const response = await fetch(`${url}/limited`);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('42');
    expect(await response.json()).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 42 });
  });

  it('gives unknown routes and Nest HTTP errors the same shape', async () => {
    const unknown = await fetch(`${url}/no/such/route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: 'No route for GET /no/such/route',
      code: 'not_found',
      documentation: 'http://platform.test/api/v1#error-not_found',
    });
    expect((await fetch(`${url}/missing`)).status).toBe(404);
  });

  it('answers with the status the contract documents for the code, and never echoes a malformed body', async () => {
    const tooLarge = await fetch(`${url}/too-large`);
    expect(tooLarge.status).toBe(400);
    expect(await tooLarge.json()).toMatchObject({ code: 'too_large' });
    const badJson = await fetch(`${url}/bad-json`);
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toEqual({
      error: 'The body is not valid JSON.',
      code: 'bad_request',
      documentation: 'http://platform.test/api/v1#error-bad_request',
    });
  });

  it('answers 503 unavailable with Retry-After while a dependency is not answering (a restart), not 500', async () => {
    const response = await fetch(`${url}/restarting`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    const body = (await response.json()) as { code: string; correlationId: string; error: string };
    expect(body.code).toBe('unavailable');
    expect(body.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.error).not.toContain('5432');
  });

  it('turns an unexpected failure into a 500 with a correlation id, no stack and no secret', async () => {
    const response = await fetch(`${url}/boom`);
    expect(response.status).toBe(500);
    const text = await response.text();
    const body = JSON.parse(text);
    expect(body).toEqual({
      error: expect.stringContaining(body.correlationId),
      code: 'internal',
      documentation: 'http://platform.test/api/v1#error-internal',
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(response.headers.get('x-correlation-id')).toBe(body.correlationId);
    expect(text).not.toMatch(/hunter2|at .*\.ts|Error:/);
    expect(logged.join('')).toContain(body.correlationId);
  });
});
