/**
 * The framework suite's table: one entry per starter, deployed through `slipway deploy` and
 * checked through the edge. To add a fixture: put the project in `libs/analyzer/fixtures/<dir>`
 * (shaped like the starter, with the lockfile its generator leaves) and add an entry here.
 */

/** A page fetched through the edge (127.0.0.1 + Host), with what a visitor would notice. */
export interface PageCheck {
  /** home, ssr (rendered per request), api, deep-link (an SPA's client route), asset, missing. */
  role: 'home' | 'ssr' | 'api' | 'deep-link' | 'missing';
  path: string;
  /** Default 200. */
  status?: number;
  /** Each must occur in the body. */
  text?: (string | RegExp)[];
  /** The body parsed as JSON must match (toMatchObject). */
  json?: Record<string, unknown>;
  contentType?: RegExp;
  cacheControl?: RegExp;
  /**
   * SSR proof: the test adds `?<echo>=<random>` and the random must come back in the body, so the
   * page was rendered for this request (not prerendered, not served from a cache).
   */
  echo?: string;
}

/** A static asset the home page links to (its fingerprinted name is found in the page), with its cache header. */
export interface AssetCheck {
  role: 'asset';
  /** Page to find the asset's URL in. */
  from: string;
  /** First capture group: the asset's path (absolute, or relative to `/`). */
  pattern: RegExp;
  cacheControl: RegExp;
  contentType?: RegExp;
}

export type Check = PageCheck | AssetCheck;

export interface FrameworkFixture {
  /** Test name and application name. */
  name: string;
  /** Directory under libs/analyzer/fixtures. */
  dir: string;
  /** What the deploy's `spec` must say. */
  spec: { framework: string | null; kind: 'static' | 'spa' | 'node' | 'node+static'; nodeMajor: 20 | 22 | 24 | null; packageManager?: string | null };
  /** Warning codes the deploy must carry exactly (sorted). */
  warnings: string[];
  checks: Check[];
}

/** Hashed asset names (Vite, Next, SvelteKit, Nuxt, Astro): cached for a year, immutable. */
const IMMUTABLE = /\bmax-age=31536000\b.*\bimmutable\b|\bimmutable\b.*\bmax-age=31536000\b/;

export const FIXTURES: FrameworkFixture[] = [
  {
    name: 'plain-static',
    dir: 'static-site',
    spec: { framework: null, kind: 'static', nodeMajor: null, packageManager: null },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['static fixture home'], contentType: /text\/html/, cacheControl: /no-cache/ },
      { role: 'home', path: '/about/', text: ['static fixture about'] },
      { role: 'asset', from: '/', pattern: /href="\/?(assets\/[^"]+\.css)"/, cacheControl: IMMUTABLE, contentType: /text\/css/ },
      { role: 'missing', path: '/no/such/page', status: 404 },
    ],
  },
];

export { IMMUTABLE };
