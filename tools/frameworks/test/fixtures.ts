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
  /** Each must occur in the asset (a client-rendered app's text is in its bundle, not its HTML). */
  text?: string[];
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
  /** With `build_output_warnings`: what its lines (the framework's own warnings) must say. */
  buildWarnings?: RegExp;
  checks: Check[];
  /** A directory under tools/frameworks/fixtures/overlays whose files replace the fixture's (deployed from a temp copy). */
  overlay?: string;
  /** A monorepo's app: passed as `slipway deploy <dir> --root-directory <value>`. */
  rootDirectory?: string;
  /**
   * The deploy must fail, with this code and a message matching `message` — unless `unless()`
   * resolves true (then it must succeed and pass its checks).
   */
  failure?: { code: string; step: string; message: RegExp[]; unless: () => Promise<boolean> };
}

/** Whether this machine reaches a host over HTTPS (5 s bound). */
export async function reachable(url: string): Promise<boolean> {
  return fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5000) }).then(
    () => true,
    () => false,
  );
}

/** Hashed asset names (Vite, Next, SvelteKit, Nuxt, Astro): cached for a year, immutable. */
const IMMUTABLE = /\bmax-age=31536000\b.*\bimmutable\b|\bimmutable\b.*\bmax-age=31536000\b/;
const MISSING: Check = { role: 'missing', path: '/no/such/page', status: 404 };
const NEXT_CHUNK: Check = { role: 'asset', from: '/', pattern: /["'](\/_next\/static\/[^"']+\.js)["']/, cacheControl: IMMUTABLE, contentType: /javascript/ };
const viteSpa = (ui: string): Check[] => [
  { role: 'home', path: '/', text: ['<div id="app"></div>'], contentType: /text\/html/, cacheControl: /no-cache/ },
  { role: 'deep-link', path: '/some/client/route', text: ['<div id="app"></div>'] },
  { role: 'asset', from: '/', pattern: /src="(\/assets\/index-[^"]+\.js)"/, cacheControl: IMMUTABLE, contentType: /javascript/, text: [`Vite + ${ui}`] },
];

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
      MISSING,
    ],
  },
  {
    name: 'next-app-router',
    dir: 'next-app-router',
    spec: { framework: 'next', kind: 'node', nodeMajor: 24, packageManager: 'npm' },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['To get started, edit the page.tsx file.'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['rendered at'] },
      { role: 'api', path: '/api/hello', json: { hello: 'next', router: 'app' }, contentType: /application\/json/ },
      NEXT_CHUNK,
      MISSING,
    ],
  },
  {
    // The starter exactly as create-next-app writes it: Geist through next/font/google, fetched from
    // Google at build time. Where Google cannot be reached the build must fail saying so.
    name: 'next-font-google',
    dir: 'next-app-router',
    overlay: 'next-font-google',
    spec: { framework: 'next', kind: 'node', nodeMajor: 24, packageManager: 'npm' },
    warnings: [],
    checks: [{ role: 'home', path: '/', text: ['To get started, edit the page.tsx file.'] }],
    failure: {
      code: 'build_failed',
      step: 'build',
      message: [/^`npm run build` exited with 1:\n/, /Failed to fetch `Geist` from Google Fonts/],
      unless: () => reachable('https://fonts.googleapis.com/css2?family=Geist'),
    },
  },
  {
    name: 'next-pages-router',
    dir: 'next-pages-standalone',
    spec: { framework: 'next', kind: 'node', nodeMajor: 24, packageManager: 'pnpm' },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['from getServerSideProps'] },
      { role: 'api', path: '/api/hello', json: { name: 'John Doe' } },
      { role: 'home', path: '/favicon.ico.txt', text: ['icon'] },
      NEXT_CHUNK,
    ],
  },
  {
    name: 'sveltekit-adapter-node',
    dir: 'sveltekit-node',
    spec: { framework: 'sveltekit', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Welcome to SvelteKit'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['from the server'] },
      { role: 'api', path: '/api/hello', json: { hello: 'sveltekit', adapter: 'node' } },
      { role: 'asset', from: '/', pattern: /["'](?:\.\/|\/)?(_app\/immutable\/[^"']+\.js)["']/, cacheControl: IMMUTABLE },
    ],
  },
  {
    name: 'sveltekit-adapter-auto',
    dir: 'sveltekit-auto',
    spec: { framework: 'sveltekit', kind: 'node', nodeMajor: 24 },
    warnings: ['framework_adapter_replaced'],
    checks: [{ role: 'home', path: '/', text: ['Welcome to SvelteKit'] }],
  },
  {
    name: 'sveltekit-adapter-static',
    dir: 'sveltekit-static',
    spec: { framework: 'sveltekit', kind: 'static', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Welcome to SvelteKit'], cacheControl: /no-cache/ },
      { role: 'asset', from: '/', pattern: /["'](?:\.\/|\/)?(_app\/immutable\/[^"']+\.js)["']/, cacheControl: IMMUTABLE, contentType: /javascript/ },
      MISSING,
    ],
  },
  {
    name: 'astro-static',
    dir: 'astro-static',
    spec: { framework: 'astro', kind: 'static', nodeMajor: 24 },
    warnings: [],
    checks: [{ role: 'home', path: '/', text: ['<h1>Astro</h1>'], cacheControl: /no-cache/ }, MISSING],
  },
  {
    name: 'astro-node',
    dir: 'astro-node',
    spec: { framework: 'astro', kind: 'node', nodeMajor: 22 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: [/<h1>20\d\d-/] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['from Astro on demand'] },
      { role: 'api', path: '/api/hello', json: { hello: 'astro', adapter: 'node' } },
    ],
  },
  {
    name: 'nuxt',
    dir: 'nuxt-app',
    spec: { framework: 'nuxt', kind: 'node', nodeMajor: 24 },
    // Nuxt's own build warning, surfaced with its line.
    warnings: ['build_output_warnings'],
    buildWarnings: /\[plugin nuxt:module-preload-polyfill\] Sourcemap is likely to be incorrect/,
    checks: [
      { role: 'ssr', path: '/', echo: 'name', text: ['from Nitro'] },
      { role: 'api', path: '/api/hello', json: { hello: 'nuxt', server: 'nitro' } },
      { role: 'asset', from: '/', pattern: /["'](\/_nuxt\/[^"']+\.js)["']/, cacheControl: IMMUTABLE },
    ],
  },
  {
    name: 'react-router-framework',
    dir: 'react-router-app',
    spec: { framework: 'react-router', kind: 'node', nodeMajor: 24 },
    // React Router 7.18's own "Future Flag Warning" lines about v8, surfaced.
    warnings: ['build_output_warnings'],
    buildWarnings: /Future Flag Warning: .* changing in React Router v8/,
    checks: [
      { role: 'home', path: '/', text: ['<h1>Welcome</h1>'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['from a loader'] },
      { role: 'api', path: '/api/hello', json: { hello: 'react-router', mode: 'framework' } },
      { role: 'asset', from: '/', pattern: /["'](\/assets\/[^"']+\.js)["']/, cacheControl: IMMUTABLE },
    ],
  },
  {
    name: 'react-router-spa',
    dir: 'react-router-spa',
    spec: { framework: 'react-router', kind: 'spa', nodeMajor: 24 },
    warnings: ['build_output_warnings'],
    buildWarnings: /Future Flag Warning/,
    checks: [
      { role: 'home', path: '/', text: ['<html lang="en">'], cacheControl: /no-cache/ },
      { role: 'deep-link', path: '/some/client/route', text: ['<html lang="en">'] },
      { role: 'asset', from: '/', pattern: /["'](\/assets\/[^"']+\.js)["']/, cacheControl: IMMUTABLE, contentType: /javascript/ },
    ],
  },
  {
    name: 'nuxt-spa',
    dir: 'nuxt-spa',
    spec: { framework: 'nuxt', kind: 'spa', nodeMajor: 24 },
    warnings: ['build_output_warnings'],
    buildWarnings: /Sourcemap is likely to be incorrect/,
    checks: [
      { role: 'home', path: '/', text: ['<div id="__nuxt">'], cacheControl: /no-cache/ },
      { role: 'deep-link', path: '/some/client/route', text: ['<div id="__nuxt">'] },
      { role: 'asset', from: '/', pattern: /["'](\/_nuxt\/[^"']+\.js)["']/, cacheControl: IMMUTABLE, contentType: /javascript/ },
    ],
  },
  {
    name: 'nestjs',
    dir: 'nestjs-app',
    spec: { framework: 'nestjs', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [{ role: 'api', path: '/', text: ['Hello World!'] }],
  },
  { name: 'vite-react', dir: 'vite-react', spec: { framework: 'vite', kind: 'spa', nodeMajor: 24 }, warnings: ['no_lockfile'], checks: viteSpa('React') },
  { name: 'vite-vue', dir: 'vite-vue', spec: { framework: 'vite', kind: 'spa', nodeMajor: 24 }, warnings: ['no_lockfile'], checks: viteSpa('Vue') },
  { name: 'vite-svelte', dir: 'vite-svelte', spec: { framework: 'vite', kind: 'spa', nodeMajor: 24 }, warnings: ['no_lockfile'], checks: viteSpa('Svelte') },
  {
    name: 'hono',
    dir: 'hono-node',
    spec: { framework: 'hono', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello Hono!'] },
      { role: 'api', path: '/api/hello', json: { hello: 'hono' } },
    ],
  },
  {
    name: 'express',
    dir: 'express-app',
    spec: { framework: 'express', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello from Express'] },
      { role: 'api', path: '/api/hello', echo: 'name', json: { hello: 'express' } },
      { role: 'asset', from: '/', pattern: /href="(\/style\.css)"/, cacheControl: /max-age=3600/, contentType: /text\/css/ },
    ],
  },
  {
    name: 'fastify',
    dir: 'fastify-app',
    spec: { framework: 'fastify', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'api', path: '/', json: { root: true } },
      { role: 'home', path: '/example', text: ['this is an example'] },
    ],
  },
  {
    name: 'koa',
    dir: 'koa-app',
    spec: { framework: 'koa', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello World from Koa'] },
      { role: 'api', path: '/api/hello', json: { hello: 'koa' } },
    ],
  },
  // Second wave (issue 32): the starters as their generators make them, with their lockfiles. How each
  // was made (and the build facts behind these checks) is in tools/frameworks/README.md.
  {
    // create-astro's basics template; CLAUDE.md is the symbolic link to AGENTS.md that create-astro writes.
    name: 'astro-basics',
    dir: 'astro-basics',
    spec: { framework: 'astro', kind: 'static', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['<title>Astro Basics</title>', 'To get started, open the'], contentType: /text\/html/, cacheControl: /no-cache/ },
      { role: 'asset', from: '/', pattern: /src="(\/_astro\/astro\.[^"]+\.svg)"/, cacheControl: IMMUTABLE, contentType: /image\/svg\+xml/ },
      MISSING,
    ],
  },
  {
    // `ng new --ssr=false`: a client-rendered app in dist/angular-static/browser; its text is in the bundle.
    name: 'angular-static',
    dir: 'angular-static',
    spec: { framework: 'angular', kind: 'spa', nodeMajor: 24, packageManager: 'npm' },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['<title>AngularStatic</title>', '<app-root></app-root>'], contentType: /text\/html/, cacheControl: /no-cache/ },
      { role: 'deep-link', path: '/some/client/route', text: ['<app-root></app-root>'] },
      {
        role: 'asset',
        from: '/',
        pattern: /src="\/?(main-[^"]+\.js)"/,
        cacheControl: IMMUTABLE,
        contentType: /javascript/,
        text: ['Congratulations! Your app is running.'],
      },
    ],
  },
  {
    // `ng new --ssr` plus one route rendered per request (src/app/ssr.ts). Angular's SSR answers 400 to a
    // Host it was not told about (NG_ALLOWED_HOSTS / angular.json allowedHosts): these pass only if the
    // platform allows the app's own host.
    name: 'angular-ssr',
    dir: 'angular-ssr',
    spec: { framework: 'angular', kind: 'node', nodeMajor: 24, packageManager: 'npm' },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello, angular-ssr', 'Congratulations! Your app is running.'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['rendered on the server for'] },
      // Served by the app's express.static (`public, max-age=31536000`) or by the edge (immutable).
      { role: 'asset', from: '/', pattern: /src="\/?(main-[^"]+\.js)"/, cacheControl: /\bmax-age=31536000\b/, contentType: /javascript/ },
      MISSING,
    ],
  },
  {
    // create-hono's nodejs template unmodified: it listens on 3000 whatever PORT says.
    name: 'hono-fixed-port',
    dir: 'hono-fixed-port',
    spec: { framework: 'hono', kind: 'node', nodeMajor: 24 },
    warnings: ['port_not_from_env'],
    checks: [{ role: 'home', path: '/', text: ['Hello Hono!'] }],
  },
  // create-turbo's basic example (pnpm workspaces, two Next.js apps): deployed once per app, and once
  // without a root directory, which must ask which app.
  ...(['web', 'docs'] as const).map((app): FrameworkFixture => ({
    name: `turbo-${app}`,
    dir: 'turbo-monorepo',
    rootDirectory: `apps/${app}`,
    spec: { framework: 'next', kind: 'node', nodeMajor: 24, packageManager: 'pnpm' },
    warnings: [],
    checks: [{ role: 'home', path: '/', text: ['Get started by editing', `apps/${app}/app/page.tsx`] }, NEXT_CHUNK, MISSING],
  })),
  {
    name: 'turbo-ambiguous',
    dir: 'turbo-monorepo',
    spec: { framework: 'next', kind: 'node', nodeMajor: 24, packageManager: 'pnpm' },
    warnings: [],
    checks: [],
    failure: {
      code: 'ambiguous_project',
      step: 'analyze',
      message: [/apps\/web/, /apps\/docs/, /"rootDirectory": "apps\/(web|docs)"/, /slipway\.json/],
      unless: async () => false,
    },
  },
  {
    // `npx @tanstack/cli create` (React, npm) plus src/routes/ssr.tsx. Its build is a fetch handler
    // (dist/server/server.js) with no server of its own.
    name: 'tanstack-start',
    dir: 'tanstack-start',
    spec: { framework: 'tanstack-start', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Start simple, ship quickly.'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['rendered on the server for'] },
      // srvx serves dist/client with no cache-control at all (the edge proxies a Node release whole): what users get today.
      { role: 'asset', from: '/', pattern: /["'](\/assets\/index-[^"']+\.js)["']/, cacheControl: /^$/, contentType: /javascript/ },
      MISSING,
    ],
  },
  {
    // SolidStart 2's basic template (Nitro 3, `node .output/server/index.mjs`) plus src/routes/ssr.tsx.
    name: 'solid-start',
    dir: 'solid-start',
    spec: { framework: 'solid-start', kind: 'node', nodeMajor: 24 },
    warnings: [],
    checks: [
      { role: 'home', path: '/', text: ['Hello world!'] },
      { role: 'ssr', path: '/ssr', echo: 'name', text: ['rendered on the server for'] },
      { role: 'asset', from: '/', pattern: /["'](\/_build\/assets\/[^"']+\.js)["']/, cacheControl: IMMUTABLE, contentType: /javascript/ },
      MISSING,
    ],
  },
  // One fixture per package manager (issue 18), each with its committed lockfile: frozen install with
  // that manager (fetched from the registry), dev dependencies pruned from the release.
  ...(
    [
      ['pm-npm', 'npm', 24],
      ['pm-pnpm', 'pnpm', 24],
      ['pm-yarn-classic', 'yarn', 20],
      ['pm-yarn-berry', 'yarn', 24],
      ['pm-bun', 'bun', 24],
    ] as const
  ).map(([dir, packageManager, nodeMajor]): FrameworkFixture => ({
    name: dir,
    dir,
    spec: { framework: null, kind: 'node', nodeMajor, packageManager },
    // Its .nvmrc pins Node 20, past its end of life.
    warnings: nodeMajor === 20 ? ['node_end_of_life'] : [],
    checks: [
      { role: 'api', path: '/', json: { escaped: '&lt;pm&gt;', devDependencyShipped: false, buildCacheShipped: false, build: { devDependencyAtBuild: true } } },
    ],
  })),
];
