import { request as httpRequest } from 'node:http';
import { readdir } from 'node:fs/promises';
import { LocalBlobStore, sourceKey } from '@slipway/blob';
import { ROOT_DIRECTORY_MAX_LENGTH } from '@slipway/contract';
import { makeTarGz, readTar } from './support/archives.js';
import { filesForm, multipart, send, type HttpResult, type Part } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const DOC = 'http://localhost:3000/api/v1#error-';

/** The deploy form field `rootDirectory` (a monorepo's application), through the real gateway, Postgres and Redis. */
describe('POST /api/v1/deploy with rootDirectory (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway('root-directory');
  });
  afterAll(async () => {
    await gw.close();
  });

  const post = (app: TestApplication, parts: Part[], path = '/api/v1/deploy') => {
    const { body, contentType } = multipart(parts);
    return send(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body });
  };
  const stored = async (taskId: string) =>
    (await gw.sql.query<{ root_directory: string | null }>('SELECT root_directory FROM deployments WHERE id = $1', [taskId])).rows[0]?.root_directory;
  /** Each test's deploy ends as a worker would end it, so the next deploy of the application is admitted. */
  const accepted = async (response: HttpResult): Promise<string> => {
    expect([response.status, response.json?.code]).toEqual([202, undefined]);
    await gw.sql.query(`UPDATE deployments SET status = 'succeeded', finished_at = now() WHERE id = $1`, [response.json.taskId]);
    return response.json.taskId;
  };
  const monorepo = () =>
    makeTarGz([
      { name: 'package.json', content: '{"workspaces":["apps/*"]}' },
      { name: 'apps/web/index.html', content: '<h1>web</h1>' },
    ]);
  const field = (value: string): Part => ({ name: 'rootDirectory', value });

  it('stores the field with the deployment whether it comes before or after the archive, or among files and paths; without it, null', async () => {
    const app = await gw.createApplication();
    const archive: Part = { name: 'archive', filename: 'source.tgz', content: await monorepo() };
    expect(await stored(await accepted(await post(app, [field('apps/web'), archive])))).toBe('apps/web');
    expect(await stored(await accepted(await post(app, [archive, field('apps/web')])))).toBe('apps/web');
    const files = filesForm({ 'package.json': '{}', 'apps/web/index.html': 'web' });
    expect(await stored(await accepted(await post(app, [...files.slice(0, 2), field('apps/web'), ...files.slice(2)])))).toBe('apps/web');
    expect(await stored(await accepted(await post(app, [...files, field('apps/web')])))).toBe('apps/web');
    // One trailing slash (a shell's completion) is trimmed; the value is kept as sent otherwise.
    expect(await stored(await accepted(await post(app, [field('packages/@acme/Site+2/'), archive])))).toBe('packages/@acme/Site+2');
    expect(await stored(await accepted(await post(app, [archive])))).toBeNull();
  });

  it('stores the whole source: the directory is chosen by the build, nothing is cut at intake', async () => {
    const app = await gw.createApplication();
    const taskId = await accepted(await post(app, [field('apps/web'), { name: 'archive', filename: 'source.tgz', content: await monorepo() }]));
    const entries = await readTar(await new LocalBlobStore(gw.blobDir).get(sourceKey(taskId)));
    expect([...entries.keys()].sort()).toEqual(['apps/web/index.html', 'package.json']);
  });

  it("takes the same field on the owners' API deploy, production and preview", async () => {
    const app = await gw.createApplication();
    const archive: Part = { name: 'archive', filename: 'source.tgz', content: await monorepo() };
    const production = await accepted(await post(app, [archive, field('apps/web')], `/dashboard/api/applications/${app.id}/deploy`));
    expect(await stored(production)).toBe('apps/web');
    const preview = await post(app, [field('apps/docs'), archive], `/dashboard/api/applications/${app.id}/deploy?target=preview&name=docs`);
    expect(preview.json).toMatchObject({ target: 'preview', preview: { name: 'docs' } });
    expect(await stored(await accepted(preview))).toBe('apps/docs');
  });

  describe('refuses a bad value with 400 bad_request, before or after the source, and keeps nothing', () => {
    let app: TestApplication;
    let blobsBefore: string[];
    const blobs = () => new LocalBlobStore(gw.blobDir).list('');
    beforeAll(async () => {
      app = await gw.createApplication();
    });
    beforeEach(async () => {
      blobsBefore = await blobs();
    });
    afterEach(async () => {
      expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [app.id])).rows[0].n).toBe(0);
      expect(await blobs()).toEqual(blobsBefore);
      expect(await readdir(gw.uploadDir)).toEqual([]);
    });
    const expectRefused = (response: HttpResult, message: RegExp) =>
      expect({ status: response.status, body: response.json }).toEqual({
        status: 400,
        body: { error: expect.stringMatching(message), code: 'bad_request', documentation: `${DOC}bad_request` },
      });

    const tooLong = new RegExp(`^rootDirectory is longer than ${ROOT_DIRECTORY_MAX_LENGTH} characters\\.$`);
    it.each([
      ['empty', '', /^rootDirectory is empty\.$/],
      ['absolute', '/apps/web', /^rootDirectory is absolute/],
      ['the root itself', '/', /^rootDirectory is absolute/],
      [`${ROOT_DIRECTORY_MAX_LENGTH + 1} characters`, 'a'.repeat(ROOT_DIRECTORY_MAX_LENGTH + 1), tooLong],
      ['5000 characters (past the field size busboy keeps)', 'x'.repeat(5000), tooLong],
      ['an empty segment', 'apps//web', /^rootDirectory has an empty segment\.$/],
      ['"."', '.', /^rootDirectory has a "\." segment\.$/],
      ['a "." segment', './apps/web', /^rootDirectory has a "\." segment\.$/],
      ['".."', '..', /^rootDirectory has a "\.\." segment\.$/],
      ['a ".." segment', 'apps/../../../etc', /^rootDirectory has a "\.\." segment\.$/],
      ['a backslash', 'apps\\web', /^rootDirectory may hold only letters, digits and \. _ @ \+ - between its \/ separators\.$/],
      ['NUL', 'apps/w\u0000eb', /^rootDirectory may hold only/],
      ['a non-ASCII letter', 'apps/wéb', /^rootDirectory may hold only/],
      ['an escape sequence', 'apps/web\u001b[2J', /^rootDirectory may hold only/],
    ])('%s', async (_name, value, message) => {
      const archive: Part = { name: 'archive', filename: 'source.tgz', content: await monorepo() };
      expectRefused(await post(app, [field(value), archive]), message);
      expectRefused(await post(app, [archive, field(value)]), message);
      expectRefused(await post(app, [...filesForm({ 'index.html': 'x' }), field(value)]), message);
    });

    it('refuses the field sent twice, even with the same value', async () => {
      const archive: Part = { name: 'archive', filename: 'source.tgz', content: await monorepo() };
      expectRefused(await post(app, [field('apps/web'), archive, field('apps/web')]), /^Send one "rootDirectory", not several\.$/);
      expectRefused(await post(app, [field('apps/web'), field('apps/docs'), archive]), /^Send one "rootDirectory", not several\.$/);
    });

    it('answers a bad value sent first without waiting for the rest of the upload', async () => {
      const { body, contentType } = multipart([field('../outside'), { name: 'archive', filename: 'source.tgz', content: Buffer.alloc(0) }]);
      const head = body.subarray(0, body.indexOf('\r\n\r\n', body.indexOf('name="archive"')) + 4);
      const req = httpRequest(`${gw.url}/api/v1/deploy`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType, 'transfer-encoding': 'chunked' },
      });
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
        });
        req.on('error', reject);
      });
      // The field and the start of an archive; the archive's bytes never come.
      req.write(head);
      req.write(Buffer.alloc(1024, 1));
      const response = await answer;
      req.destroy();
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toMatchObject({ code: 'bad_request', error: 'rootDirectory has a ".." segment.' });
    });
  });

  it('publishes the field in GET /api/v1', async () => {
    const contract = (await send(`${gw.url}/api/v1`)).json;
    const deploy = contract.endpoints.find((e: { path: string }) => e.path === '/api/v1/deploy');
    expect(deploy.request.schema.properties.rootDirectory).toMatchObject({ type: 'string', description: expect.stringContaining('Root Directory') });
    expect(contract.errors.codes.find((e: { code: string }) => e.code === 'bad_request').meaning).toContain('rootDirectory');
  });
});
