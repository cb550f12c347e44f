import { portReadingCommand } from './frameworks.js';
import { analyzeSource, buildFailureLines, buildOutputWarnings, detectSpec, type AnalyzeContext, type ProjectFile } from './index.js';

const context: AnalyzeContext = { secretNames: [], signInEnabled: false };
const file = (path: string, text: string): ProjectFile => ({ path, text, bytes: Buffer.byteLength(text) });
const pkg = (body: object) => file('package.json', JSON.stringify(body));
const codes = (files: ProjectFile[]) => analyzeSource(files, context).warnings.map((w) => w.code);

describe('port_not_from_env only where the port really is not read from PORT', () => {
  it.each([
    ['next start', 'next start'],
    ['NODE_ENV=production next start -H 0.0.0.0', 'next start'],
    ['cross-env NODE_ENV=production react-router-serve ./build/server/index.js', 'react-router-serve'],
    ['npx --no-install fastify start -l info app.js', 'fastify start (fastify-cli)'],
    ['remix-serve ./build/index.js', 'remix-serve'],
    ['nuxt preview', 'nuxt start'],
  ])('`%s` reads PORT itself', (script, tool) => {
    expect(portReadingCommand(script)).toBe(tool);
  });

  it.each(['node server.js', 'fastify-cli-wrapper', 'tsx src/index.ts', ''])('`%s` does not (the code is judged)', (script) => {
    expect(portReadingCommand(script)).toBeNull();
  });

  it('fastify-cli (`fastify generate`): no PORT in the code, none needed', () => {
    const files = [
      pkg({ scripts: { start: 'fastify start -l info app.js' }, dependencies: { fastify: '^5.0.0', 'fastify-cli': '^8.0.0' } }),
      file('app.js', 'export default async function (fastify) {}'),
    ];
    expect(detectSpec(files).port).toEqual({ source: 'env', fixed: null });
    expect(codes(files)).not.toContain('port_not_from_env');
  });

  it("create-hono's Node template listens on a fixed 3000: the warning is right there", () => {
    const files = [
      pkg({ scripts: { build: 'tsc', start: 'node dist/index.js' }, dependencies: { hono: '^4.10.6', '@hono/node-server': '^1.19.6' } }),
      file('src/index.ts', 'serve({\n  fetch: app.fetch,\n  port: 3000\n})'),
    ];
    expect(analyzeSource(files, context).warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'port_not_from_env', detail: '3000' })]));
  });

  it('reading PORT by destructuring counts', () => {
    const files = [
      pkg({ scripts: { start: 'node server.js' }, dependencies: { express: '^5.1.0' } }),
      file('server.js', 'const { PORT = 3000, HOST } = process.env;\napp.listen(PORT);'),
    ];
    expect(detectSpec(files).port).toEqual({ source: 'env', fixed: null });
  });

  it('a slipway.json startCommand running a PORT-reading tool counts', () => {
    const files = [
      pkg({ dependencies: { fastify: '^5.0.0' } }),
      file('app.js', 'export default async () => {}'),
      file('slipway.json', '{"startCommand":"fastify start app.js"}'),
    ];
    expect(detectSpec(files).port).toEqual({ source: 'env', fixed: null });
  });

  it('hazards stay whatever the project kind: a credential in a Next.js project is reported like in a static site', () => {
    const secret = `const key = "sk_live_${'a1B2c3D4e5F6g7H8i9J0k1L2'}";`;
    const next = analyzeSource(
      [pkg({ scripts: { build: 'next build', start: 'next start' }, dependencies: { next: '16.0.3' } }), file('app/page.tsx', secret)],
      context,
    );
    const site = analyzeSource([file('index.html', '<h1>hi</h1>'), file('app.js', secret)], context);
    expect(next.hazards.map((h) => h.code)).toEqual(['secret_in_source']);
    expect(site.hazards.map((h) => h.code)).toEqual(['secret_in_source']);
  });
});

describe("the framework's own build output", () => {
  it('build_output_warnings carries the warning lines: npm/Nuxt `WARN`, Next.js `⚠`, Vite `(!)`, colours removed', () => {
    const log = [
      '> next build',
      '\x1b[33m⚠\x1b[39m Invalid next.config.ts options detected',
      ' WARN  [nitro] Using fallback compatibility date',
      '(!) Some chunks are larger than 500 kB after minification.',
      'npm warn config production Use `--omit=dev` instead.',
      'built in 3.2s',
    ].join('\n');
    const [warning] = buildOutputWarnings(log);
    expect(warning).toMatchObject({ code: 'build_output_warnings', message: expect.stringMatching(/^The build printed 3 warning lines;/) });
    expect(warning!.detail!.split('\n')).toEqual([
      '⚠ Invalid next.config.ts options detected',
      ' WARN  [nitro] Using fallback compatibility date',
      '(!) Some chunks are larger than 500 kB after minification.',
    ]);
    expect(buildOutputWarnings('> vite build\nbuilt dist/assets/main-1a2b3c4d.js\n')).toEqual([]);
    // Next.js on every first build: about caching, which is the platform's to do, not the project's.
    expect(
      buildOutputWarnings(
        ' ⚠ No build cache found. Please configure build caching for faster rebuilds. Read more: https://nextjs.org/docs/messages/no-cache\n',
      ),
    ).toEqual([]);
  });

  it('is bounded: at most 10 lines of 300 characters, and says how many there were', () => {
    const log = Array.from({ length: 40 }, (_, i) => `warning ${i}: ${'x'.repeat(1000)}`).join('\n');
    const [warning] = buildOutputWarnings(log);
    const lines = warning!.detail!.split('\n');
    expect(lines).toHaveLength(7); // 2000 characters: 6 whole lines and the start of a 7th
    expect(lines.every((line) => line.length <= 301)).toBe(true);
    expect(warning!.detail!.length).toBeLessThanOrEqual(2000);
    expect(warning!.message).toMatch(/printed 40 warning lines \(the first 7 in detail\)/);
  });

  it("a failed build's error names what failed: Next.js 16 with next/font/google and no route to Google (as the suite saw it)", () => {
    const log = [
      '> next-app@0.1.0 build',
      '> next build',
      '   ▲ Next.js 16.0.3 (Turbopack)',
      '   Creating an optimized production build ...',
      '> Build error occurred',
      'Error: Turbopack build failed with 2 errors:',
      'next/font: error:',
      'Failed to fetch `Geist` from Google Fonts.',
      'Failed to fetch `Geist Mono` from Google Fonts.',
    ].join('\n');
    expect(buildFailureLines(log)).toBe(
      '> Build error occurred\nError: Turbopack build failed with 2 errors:\nnext/font: error:\nFailed to fetch `Geist` from Google Fonts.\nFailed to fetch `Geist Mono` from Google Fonts.',
    );
  });

  it("a failed build's error names what failed: a fetch that could not reach its host", () => {
    const log = [
      '> next build',
      '   ▲ Next.js 16.0.3',
      '   Creating an optimized production build ...',
      'Failed to fetch font `Geist`: https://fonts.googleapis.com/css2?family=Geist',
      'getaddrinfo ENOTFOUND fonts.googleapis.com',
      '> Build failed because of webpack errors',
      'npm notice something',
    ].join('\n');
    expect(buildFailureLines(log).split('\n')).toEqual([
      'Failed to fetch font `Geist`: https://fonts.googleapis.com/css2?family=Geist',
      'getaddrinfo ENOTFOUND fonts.googleapis.com',
      '> Build failed because of webpack errors',
    ]);
    expect(buildFailureLines('compiling\nexit\n')).toBe('compiling\nexit');
    expect(buildFailureLines('')).toBe('');
  });
});
