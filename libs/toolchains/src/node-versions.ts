import semver from 'semver';

/** LTS code names (`lts/<name>` in `.nvmrc`), lower-case, by major. */
export const NODE_LTS_CODENAMES: Readonly<Record<string, number>> = {
  argon: 4,
  boron: 6,
  carbon: 8,
  dubnium: 10,
  erbium: 12,
  fermium: 14,
  gallium: 16,
  hydrogen: 18,
  iron: 20,
  jod: 22,
  krypton: 24,
};

/** What a project asks for, and where it said so. */
export interface NodeRequest {
  value: string;
  source: 'engines' | '.nvmrc' | '.node-version';
}

export interface ResolveOptions {
  /** Majors this platform offers (`LIMITS.node.supportedMajors`). */
  supported: readonly number[];
  /** The platform's own Node (`process.version` without `v`): used when nothing is declared, or when it satisfies a range. */
  platform: string;
  /** The major of a project that declares nothing (its newest release; the platform's Node when it is that major). Absent: the platform's Node. */
  defaultMajor?: number;
}

export type NodeResolution = { ok: true; version: string; source: 'platform' | 'registry' } | { ok: false; reason: string };

/** How a declaration reads after normalising: a semver range, or "the newest of these majors". */
type Parsed = { kind: 'range'; range: string; exact: boolean } | { kind: 'newest'; majors: number[] } | { kind: 'invalid'; why: string };

/** Parses one declaration (`>=22`, `^20.11`, `22`, `v24.1.0`, `lts/*`, `lts/jod`, `lts/-1`, `node`). */
export function parseNodeRequest(value: string, supported: readonly number[]): Parsed {
  const text = value.trim().toLowerCase();
  if (text === '' || text.length > 200) return { kind: 'invalid', why: 'empty or too long' };
  const lts = [...supported].filter((m) => m % 2 === 0).sort((a, b) => b - a);
  if (text === 'node' || text === 'latest' || text === 'current' || text === 'stable') return { kind: 'newest', majors: [Math.max(...supported)] };
  if (text === 'lts/*' || text === 'lts') return { kind: 'newest', majors: lts.slice(0, 1) };
  const back = /^lts\/-(\d{1,2})$/.exec(text);
  if (back) return { kind: 'newest', majors: lts.slice(Number(back[1]), Number(back[1]) + 1) };
  const name = /^lts\/([a-z]+)$/.exec(text);
  if (name) {
    const major = NODE_LTS_CODENAMES[name[1]!];
    return major === undefined ? { kind: 'invalid', why: `unknown LTS name "${name[1]}"` } : { kind: 'range', range: `${major}.x`, exact: false };
  }
  const exact = semver.valid(semver.clean(text) ?? '');
  if (exact) return { kind: 'range', range: exact, exact: true };
  const range = semver.validRange(text.replace(/(^|[\s|<>=^~])v(?=\d)/g, '$1'));
  return range ? { kind: 'range', range, exact: false } : { kind: 'invalid', why: 'not a version or a range' };
}

/**
 * Chooses the exact Node version for a declaration. Nothing declared: the newest `defaultMajor`
 * (the platform's own Node without one).
 * A range: the newest supported major it allows (`>=20` → 24, not the platform's 20), the
 * platform's own Node when it is of that major and fits (no download), else that major's newest
 * released (non-prerelease) version that satisfies it. `versions` is asked
 * for only when needed (it may reach the registry).
 */
export async function resolveNodeVersion(request: NodeRequest | null, versions: () => Promise<string[]>, options: ResolveOptions): Promise<NodeResolution> {
  const supportedText = options.supported.join(', ');
  if (!request && (options.defaultMajor === undefined || semver.major(options.platform) === options.defaultMajor))
    return { ok: true, version: options.platform, source: 'platform' };
  if (!request) {
    const newest = semver.rsort(
      (await versions()).filter((v) => semver.valid(v) && semver.prerelease(v) === null && semver.major(v) === options.defaultMajor),
    )[0];
    return newest
      ? { ok: true, version: newest, source: 'registry' }
      : {
          ok: false,
          reason: `no Node.js ${options.defaultMajor} (the default for projects that declare none) is published; declare a Node version (engines.node, .nvmrc)`,
        };
  }
  const declared = `${request.source === 'engines' ? 'engines.node' : request.source} "${request.value.trim().slice(0, 100)}"`;
  const parsed = parseNodeRequest(request.value, options.supported);
  if (parsed.kind === 'invalid') return { ok: false, reason: `${declared} is ${parsed.why}; supported Node.js majors: ${supportedText}` };
  const isSupported = (v: string) => options.supported.includes(semver.major(v));
  const platformMajor = semver.major(options.platform);
  const platformFits = isSupported(options.platform) && (parsed.kind === 'range' ? semver.satisfies(options.platform, parsed.range) : false);
  // A range resolves to the newest supported major it allows (as Vercel: `>=20` is 24), so the
  // platform's Node is taken without asking the registry only when no newer supported major fits.
  const newerMajorFits = parsed.kind === 'range' && options.supported.some((m) => m > platformMajor && semver.intersects(parsed.range, `${m}.x`));
  if (platformFits && !newerMajorFits) return { ok: true, version: options.platform, source: 'platform' };
  const all = (await versions()).filter((v) => semver.valid(v) && semver.prerelease(v) === null);
  const fits = (v: string) => (parsed.kind === 'range' ? semver.satisfies(v, parsed.range) : parsed.majors.includes(semver.major(v)));
  const offered = [...new Set([...all, options.platform])].filter((v) => isSupported(v) && fits(v));
  if (offered.length > 0) {
    const major = Math.max(...offered.map((v) => semver.major(v)));
    // Within that major the platform's own Node needs no download.
    if (platformFits && platformMajor === major) return { ok: true, version: options.platform, source: 'platform' };
    const best = semver.rsort(offered.filter((v) => semver.major(v) === major))[0]!;
    return { ok: true, version: best, source: best === options.platform ? 'platform' : 'registry' };
  }
  const majors = [...new Set(all.filter(fits).map((v) => semver.major(v)))].sort((a, b) => b - a);
  return {
    ok: false,
    reason:
      majors.length > 0
        ? `${declared} asks for Node.js ${majors.slice(0, 4).join('/')}${majors.length > 4 ? '/…' : ''}; this platform offers majors ${supportedText} only`
        : `${declared} matches no released Node.js version; supported Node.js majors: ${supportedText}`,
  };
}
