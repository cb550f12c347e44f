import { LIMITS } from './limits.js';
import { SourceLinks, linkTargetProblem } from './source-links.js';

const of = (links: Record<string, string>) => new SourceLinks(new Map(Object.entries(links)), LIMITS.upload);

describe('SourceLinks', () => {
  it.each<[string, Record<string, string>, string, string | null]>([
    ['a link to a file beside it', { 'CLAUDE.md': 'AGENTS.md' }, 'CLAUDE.md', 'AGENTS.md'],
    ['a link up and down again', { 'apps/web/tsconfig.json': '../../tsconfig.base.json' }, 'apps/web/tsconfig.json', 'tsconfig.base.json'],
    ['a dangling link inside', { 'docs/latest': 'v2' }, 'docs/latest', 'docs/v2'],
    ['a chain through a linked folder', { packages: 'libs', 'x.json': 'packages/shared/x.json' }, 'x.json', 'libs/shared/x.json'],
    ['a link to the project itself', { self: '.' }, 'self', ''],
    ['a link to its own folder', { 'sub/up': '..' }, 'sub/up', ''],
    ['a link deeper than any entry can be', { deep: 'a/'.repeat(70) + 'x' }, 'deep', null],
    ['a link that goes deeper than any entry and comes back', { back: `${'a/'.repeat(70)}${'../'.repeat(69)}b` }, 'back', 'a/b'],
  ])('%s stays inside', (_what, links, link, path) => {
    expect(of(links).resolve(link)).toEqual({ kind: 'inside', path });
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
    ['a chain of 41 links', Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`l${i}`, `l${i + 1}`])), 'l0', 'loop'],
  ])('%s is refused', (_what, links, link, kind) => {
    expect(of(links).resolve(link)).toEqual({ kind });
  });

  it('a chain of 40 links is followed (the kernel’s own limit)', () => {
    const links = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`l${i}`, i === 39 ? 'end' : `l${i + 1}`]));
    expect(of(links).resolve('l0')).toEqual({ kind: 'inside', path: 'end' });
  });

  it('names the link and says why', () => {
    expect(of({ me: 'me' }).problem('me')).toBe('is a symbolic link (to "me") in a loop of links');
    expect(of({ up: '../x' }).problem('up')).toBe('is a symbolic link (to "../x") that leads outside the project');
    expect(of({ ok: 'x' }).problem('ok')).toBeNull();
  });

  it('bounds the work a crafted source can cause: chains of long targets run out of steps, quickly', () => {
    // Each link climbs in and out of 300 folders before naming the next: 40 hops of ~600 steps each.
    const links = new Map<string, string>();
    const count = 2000;
    for (let i = 0; i < count; i += 1) links.set(`l${i}`, `${'a/'.repeat(150)}${'../'.repeat(150)}l${(i + 1) % count}`);
    const resolver = new SourceLinks(links, LIMITS.upload);
    const started = process.hrtime.bigint();
    const kinds = new Set([...links.keys()].map((path) => resolver.resolve(path).kind));
    expect(kinds).toContain('too_complex');
    expect(resolver.problem('l0')).toBe(
      `is a symbolic link (to ${JSON.stringify(links.get('l0')!.slice(0, 200) + '…')}) that cannot be checked: the project's links take more than 256000 steps to follow`,
    );
    console.log(`2000 crafted links: ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
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
    ['a segment too long', `a/${'é'.repeat(128)}`, 'has a target with a segment longer than 255 bytes'],
  ])('%s', (_what, target, problem) => {
    expect(linkTargetProblem(target, LIMITS.upload)).toBe(problem);
  });
  it('accepts relative targets, dots included', () => {
    for (const target of ['AGENTS.md', '../x', './a//b/', '.', 'ｃａｆé', 'x'.repeat(255)]) expect(linkTargetProblem(target, LIMITS.upload)).toBeNull();
  });
});
