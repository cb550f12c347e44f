import { analyzeSource } from './analyze.js';
import { declaredNodeVersion, engineMismatch } from './node-version.js';
import type { ProjectFile } from './types.js';

const file = (path: string, text: string): ProjectFile => ({ path, bytes: text.length, text });
const pkg = (extra: object = {}) => file('package.json', JSON.stringify({ name: 'x', scripts: { start: 'node server.js' }, ...extra }));
const server = file('server.js', 'require("http").createServer().listen(process.env.PORT)');

describe('what Node.js a project declares', () => {
  it.each([
    [[pkg({ engines: { node: '>=22' } })], { value: '>=22', source: 'engines' }],
    [[pkg({ engines: { node: '>=22' } }), file('.nvmrc', 'v22.1.0\n')], { value: 'v22.1.0', source: '.nvmrc' }],
    [[pkg(), file('.nvmrc', '# pinned\n\n  lts/jod  # the LTS\n')], { value: 'lts/jod', source: '.nvmrc' }],
    [[pkg(), file('.nvmrc', '20'), file('.node-version', '24.1.0\r\n')], { value: '24.1.0', source: '.node-version' }],
    [[pkg(), file('.nvmrc', '\n# nothing\n')], null],
    [[pkg({ engines: { node: 22 } })], null],
    [[pkg({ engines: { node: '  ' } })], null],
    [[pkg()], null],
    [[file('package.json', '{ not json')], null],
  ])('%#', (files, expected) => {
    expect(declaredNodeVersion(files)).toEqual(expected);
  });

  it('a nested .nvmrc does not count', () => {
    expect(declaredNodeVersion([pkg(), file('sub/.nvmrc', '22')])).toBeNull();
  });

  it('the spec carries the request and no version until the worker resolves it; a site with nothing to run asks for none', () => {
    const { spec } = analyzeSource([pkg({ engines: { node: '^22' } }), server], { secretNames: [], signInEnabled: false });
    expect(spec).toMatchObject({ nodeVersion: null, nodeVersionRequest: { value: '^22', source: 'engines' } });
    const site = analyzeSource([file('package.json', JSON.stringify({ engines: { node: '22' } })), file('index.html', '<p>hi</p>')], {
      secretNames: [],
      signInEnabled: false,
    });
    expect(site.spec).toMatchObject({ kind: 'static', nodeVersion: null, nodeVersionRequest: null });
  });

  it.each([
    ['>=22', '20', true],
    ['>=22', 'v24.1.0', false],
    ['^20.11', '20', false],
    ['22.x', 'lts/jod', false],
    ['>=22', 'not a version', false],
  ])('engines %s with .nvmrc %s: engine_mismatch %s', (engines, pin, warns) => {
    const files = [pkg({ engines: { node: engines } }), file('.nvmrc', pin)];
    expect(engineMismatch(files, declaredNodeVersion(files)) !== null).toBe(warns);
  });
});
