import { linkTargetProblem, resolveSourceLink, sourceLinkProblem } from './source-links.js';

const tree = (links: Record<string, string>) => (path: string) => links[path];

describe('resolveSourceLink', () => {
  it.each<[string, Record<string, string>, string, string]>([
    ['a link to a file beside it', { 'CLAUDE.md': 'AGENTS.md' }, 'CLAUDE.md', 'AGENTS.md'],
    ['a link up and down again', { 'apps/web/tsconfig.json': '../../tsconfig.base.json' }, 'apps/web/tsconfig.json', 'tsconfig.base.json'],
    ['a dangling link inside', { 'docs/latest': 'v2' }, 'docs/latest', 'docs/v2'],
    ['a chain through a linked folder', { packages: 'libs', 'x.json': 'packages/shared/x.json' }, 'x.json', 'libs/shared/x.json'],
    ['a link to the project itself', { self: '.' }, 'self', ''],
    ['a link to its own folder', { 'sub/up': '..' }, 'sub/up', ''],
  ])('%s stays inside', (_what, links, link, path) => {
    expect(resolveSourceLink(link, tree(links))).toEqual({ kind: 'inside', path });
  });

  it.each<[string, Record<string, string>, string, string]>([
    ['an absolute target', { passwd: '/etc/passwd' }, 'passwd', 'outside'],
    ['a .. above the project', { up: '..' }, 'up', 'outside'],
    ['a .. above the project from a folder', { 'a/b': '../../x' }, 'a/b', 'outside'],
    // Lexically `a/up/../..` is the project itself; the kernel goes through `a/up` first.
    ['a chain that climbs through another link', { 'a/up': '..', b: 'a/up/../..' }, 'b', 'outside'],
    ['a chain that ends outside', { one: 'two', two: 'three/../..' }, 'one', 'outside'],
    ['a chain that leaves and comes back in', { out: '../project/x' }, 'out', 'outside'],
    ['a link to itself', { me: 'me' }, 'me', 'loop'],
    ['two links to each other', { a: 'b', b: 'a' }, 'a', 'loop'],
    ['a link through itself', { a: 'a/x' }, 'a', 'loop'],
  ])('%s is refused', (_what, links, link, kind) => {
    expect(resolveSourceLink(link, tree(links))).toEqual({ kind });
  });

  it('names the link and says why', () => {
    expect(sourceLinkProblem('me', tree({ me: 'me' }))).toBe('is a symbolic link (to "me") in a loop of links');
    expect(sourceLinkProblem('up', tree({ up: '../x' }))).toBe('is a symbolic link (to "../x") that leads outside the project');
    expect(sourceLinkProblem('ok', tree({ ok: 'x' }))).toBeNull();
  });
});

describe('linkTargetProblem', () => {
  it.each([
    ['empty', '', 'has an empty target'],
    ['absolute', '/etc/passwd', 'has an absolute target'],
    ['a drive', 'C:/x', 'has an absolute target'],
    ['a backslash', '..\\x', 'has a target with a backslash'],
    ['NUL', 'a\u0000b', 'has a target with NUL or a control character'],
    ['a C1 control', 'a\u009bb', 'has a target with NUL or a control character'],
    ['too long', 'x'.repeat(1025), 'has a target longer than 1024 bytes'],
  ])('%s', (_what, target, problem) => {
    expect(linkTargetProblem(target, 1024)).toBe(problem);
  });
  it('accepts relative targets, dots included', () => {
    for (const target of ['AGENTS.md', '../x', './a//b/', '.', 'ｃａｆé']) expect(linkTargetProblem(target, 1024)).toBeNull();
  });
});
