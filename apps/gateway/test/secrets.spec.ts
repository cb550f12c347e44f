import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { TEST_REDIS_URL } from '@slipway/testing';
import { Redis } from 'ioredis';
import { filesForm, multipart, send } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const DOC = 'http://localhost:3000/api/v1#error-';
const CANARY = 'canary-7f3a9c1e-DO-NOT-LEAK-5b2d';

describe('PUT/GET /api/v1/secrets (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  const logged: string[] = [];
  const originalOut = process.stdout.write.bind(process.stdout);
  const originalErr = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    const capture = (chunk: unknown) => (logged.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk)), true);
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    // Most verbose level, so every log line the service can write is captured.
    gw = await startGateway('secrets', {}, { logLevel: 'verbose' });
    app = await gw.createApplication();
  });
  afterAll(async () => {
    process.stdout.write = originalOut;
    process.stderr.write = originalErr;
    await gw.close();
  });

  const put = (body: string, key = app.key, type = 'application/json') =>
    send(`${gw.url}/api/v1/secrets`, { method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body: Buffer.from(body) });
  const list = (key = app.key) => send(`${gw.url}/api/v1/secrets`, { headers: { authorization: `Bearer ${key}` } });
  const bad = (code: string) => ({ error: expect.any(String), code, documentation: `${DOC}${code}` });

  it('upserts, deletes with null, answers the names now set, lists names only', async () => {
    const first = await put(JSON.stringify({ secrets: { DATABASE_URL: 'postgres://x', API_TOKEN: 'abc', _PRIVATE: 'p' } }));
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ names: ['API_TOKEN', 'DATABASE_URL', '_PRIVATE'] });
    const second = await put(JSON.stringify({ secrets: { API_TOKEN: 'rotated', _PRIVATE: null, MISSING: null } }));
    expect(second.json).toEqual({ names: ['API_TOKEN', 'DATABASE_URL'] });
    const names = await list();
    expect(names.status).toBe(200);
    expect(names.json).toEqual({ names: ['API_TOKEN', 'DATABASE_URL'] });
    const other = await gw.createApplication();
    expect((await list(other.key)).json).toEqual({ names: [] });
  });

  it('stores values as AES-256-GCM envelopes bound to application and name', async () => {
    const keyring = keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY);
    const rows = (await gw.sql.query('SELECT name, value FROM secrets WHERE application_id = $1 ORDER BY name', [app.id])).rows as {
      name: string;
      value: Buffer;
    }[];
    const token = rows.find((r) => r.name === 'API_TOKEN')!;
    expect(decryptEnvelopeToString(keyring, token.value, envelopeBinding.secret(app.id, 'API_TOKEN'))).toBe('rotated');
    expect(token.value.includes(Buffer.from('rotated'))).toBe(false);
    // Moved to another name or application, the ciphertext does not decrypt.
    expect(() => decryptEnvelopeToString(keyring, token.value, envelopeBinding.secret(app.id, 'DATABASE_URL'))).toThrow();
    expect(() => decryptEnvelopeToString(keyring, token.value, envelopeBinding.secret('00000000-0000-4000-8000-000000000000', 'API_TOKEN'))).toThrow();
  });

  it.each([
    ['malformed JSON', '{"secrets": {"A": "x"'],
    ['not an object', '[1,2]'],
    ['a lower-case name', '{"secrets": {"lower": "x"}}'],
    ['a name starting with a digit', '{"secrets": {"1ABC": "x"}}'],
    ['a dash', '{"secrets": {"A-B": "x"}}'],
    ['a number value', '{"secrets": {"A": 1}}'],
    ['an unknown top-level field', '{"secrets": {}, "extra": 1}'],
    ['no secrets field', '{}'],
    ['a NUL character in a value (an environment variable ends at it)', '{"secrets": {"A": "x\\u0000y"}}'],
  ])('refuses %s with 400 bad_request', async (_what, body) => {
    const response = await put(body);
    expect(response.status).toBe(400);
    expect(response.json).toEqual(bad('bad_request'));
  });

  it('refuses a body that is not JSON', async () => {
    const response = await put('A=b', app.key, 'text/plain');
    expect(response.status).toBe(400);
    expect(response.json).toEqual(bad('bad_request'));
  });

  it('refuses values and counts over the published limits with too_large, changing nothing', async () => {
    const big = await put(JSON.stringify({ secrets: { BIG: 'x'.repeat(32 * 1024 + 1) } }));
    expect(big.status).toBe(400);
    expect(big.json).toEqual(bad('too_large'));
    const many = Object.fromEntries(Array.from({ length: 199 }, (_, i) => [`S_${i}`, 'v']));
    const over = await put(JSON.stringify({ secrets: many }));
    expect(over.status).toBe(400);
    expect(over.json).toEqual(bad('too_large'));
    const body = await put(JSON.stringify({ secrets: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`S_${i}`, 'x'.repeat(30 * 1024)])) }));
    expect(body.status).toBe(400);
    expect(body.json).toEqual(bad('too_large'));
    expect((await list()).json).toEqual({ names: ['API_TOKEN', 'DATABASE_URL'] });
  });

  it('never lets a canary value reach a response, a log line, the job data in Redis or a plaintext column', async () => {
    const responses: string[] = [];
    const record = async (p: Promise<{ text: string; headers: Record<string, unknown> }>) => {
      const r = await p;
      responses.push(r.text, JSON.stringify(r.headers));
      return r;
    };
    await record(put(JSON.stringify({ secrets: { CANARY: CANARY } })));
    await record(put(`{"secrets": {"CANARY": "${CANARY}"`));
    await record(put(`{"secrets": {"CANARY": ${CANARY}}}`));
    await record(put(CANARY));
    await record(put(JSON.stringify({ secrets: { 'bad-name': CANARY } })));
    await record(put(JSON.stringify({ secrets: { CANARY: CANARY, [`X${CANARY.replace(/-/g, '_').toUpperCase()}`]: 5 } })));
    await record(list());
    const { body, contentType } = multipart(filesForm({ 'index.html': 'hello' }));
    const deployed = await record(
      send(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body }),
    );
    const taskId = JSON.parse(deployed.text).taskId as string;
    await record(send(`${gw.url}/api/v1/deployments/${taskId}`, { headers: { authorization: `Bearer ${app.key}` } }));
    await record(send(`${gw.url}/api/v1`));
    expect(responses.join('\n')).not.toContain(CANARY);
    // Not even a fragment (JSON parse errors would quote a slice of the body).
    expect(responses.join('\n')).not.toMatch(/7f3a9c|DO-NOT-LEAK|5b2d/);
    expect(responses.join('\n')).toContain('CANARY');

    expect(logged.join('')).toContain(taskId);
    expect(logged.join('')).not.toContain(CANARY);

    const redis = new Redis(TEST_REDIS_URL);
    const dump: string[] = [];
    for (const key of await redis.keys(`${gw.redisPrefix}:*`)) {
      const type = await redis.type(key);
      if (type === 'hash') dump.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'string') dump.push((await redis.get(key)) ?? '');
      else if (type === 'list') dump.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'zset') dump.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'set') dump.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'stream') dump.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
    redis.disconnect();
    expect(dump.join('\n')).toContain(taskId);
    expect(dump.join('\n')).not.toContain(CANARY);

    const columns = (
      await gw.sql.query(`SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea')`)
    ).rows as { table_name: string; column_name: string; data_type: string }[];
    expect(columns.length).toBeGreaterThan(20);
    for (const { table_name, column_name, data_type } of columns) {
      const expression = data_type === 'bytea' ? `encode("${column_name}", 'escape')` : `"${column_name}"::text`;
      const hits = await gw.sql.query(`SELECT count(*)::int AS n FROM "${table_name}" WHERE strpos(${expression}, $1) > 0`, [CANARY]);
      expect({ column: `${table_name}.${column_name}`, hits: hits.rows[0].n }).toEqual({ column: `${table_name}.${column_name}`, hits: 0 });
    }
    const stored = (await gw.sql.query(`SELECT value FROM secrets WHERE application_id = $1 AND name = 'CANARY'`, [app.id])).rows[0].value as Buffer;
    expect(decryptEnvelopeToString(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), stored, envelopeBinding.secret(app.id, 'CANARY'))).toBe(CANARY);
  });
});
