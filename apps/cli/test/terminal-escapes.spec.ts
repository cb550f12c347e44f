import { rm } from 'node:fs/promises';
import { CLI_OWN_SEQUENCES, PTY_LINE_ENDINGS, runForBytes, terminalControls, type RawRun } from '@slipway/testing';
import { projectFixture } from './support/fixture.js';
import { CLI_MAIN, startPlatform, type PlatformUnderTest } from './support/platform.js';
import { advanceTask, latestTaskId, stepsUpTo, type TaskPatch } from './support/worker-sim.js';

/*
 * Issue 29: the CLI must never pass a terminal instruction it received on to the user's terminal.
 * The deployment row is written with SQL (support/worker-sim.ts) as a platform that did not clean
 * its texts would hold them — an older worker, a future field —, so that this tests the CLI's
 * own protection (contract `visibleControls` / `terminalJson`), not the worker's capture (tested
 * in apps/build-worker and, end to end, in tools/hostile/test/terminal-escapes.spec.ts).
 */
const OSC52 = '\x1b]52;c;cm0gLXJmIH4K\x07'; // writes "rm -rf ~" to the clipboard
const OSC8 = '\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\'; // a link whose target is hidden
const OSC0 = '\x1b]0;pwned\x07'; // the window title
const CURSOR = '\x1b[2A\x1b[2K\x1b[10;1H'; // up two lines, erase, move
const C1 = '\x9b2J\x9d0;c1 title\x9c\x85'; // 8-bit CSI (erase screen), OSC, ST, NEL
const COLOUR = '\x1b[31mred\x1b[0m';
const HOSTILE = `${OSC52}${OSC8}${OSC0}${CURSOR}${C1}${COLOUR}fake\rreal\x07\x08\x7f`;
/** How it must read on the terminal: every control character as its JSON escape. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
const SHOWN = HOSTILE.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const FAILED: TaskPatch = {
  status: 'failed',
  steps: stepsUpTo(3, { status: 'failed', log: `building\nline ${HOSTILE}\nError: ${HOSTILE}\n` }),
  error: { code: 'build_failed', message: `npm run build exited with 1: ${HOSTILE}`, step: 'build' },
  warnings: [{ code: 'build_output_warnings', message: `warn ${HOSTILE}`, detail: `warning: ${HOSTILE}` }],
  hazards: [{ code: 'secret_in_source', message: `found ${HOSTILE}`, severity: 'high', file: `src/${HOSTILE}.pem` }],
};

describe('slipway never writes a terminal instruction it received (real binary, real gateway)', () => {
  let platform: PlatformUnderTest;
  const dirs: string[] = [];
  beforeAll(async () => {
    platform = await startPlatform('cli-escapes');
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const fixture = async () => {
    const dir = await projectFixture();
    dirs.push(dir);
    return dir;
  };
  const run = (args: string[], apiKey: string, options: { pty?: boolean; colour?: boolean } = {}) =>
    runForBytes(['node', CLI_MAIN, ...args], {
      env: { ...platform.cliEnv({ SLIPWAY_API_KEY: apiKey, TERM: 'xterm-256color' }), ...(options.colour ? {} : { NO_COLOR: '1' }) },
      pty: options.pty,
      timeoutMs: 60_000,
    });

  /** Every control character in what the CLI wrote, but those a pty adds and the CLI's own (colours, live line) when `own`. */
  function violations(what: string, result: RawRun, options: { pty?: boolean; own?: boolean } = {}): string[] {
    const allowed = [...(options.pty ? PTY_LINE_ENDINGS : []), ...(options.own ? CLI_OWN_SEQUENCES : [])];
    return [
      ...terminalControls(result.stdout, allowed).map((v) => `${what} stdout: ${v}`),
      ...terminalControls(result.stderr, allowed).map((v) => `${what} stderr: ${v}`),
    ];
  }

  async function failedTask(name: string): Promise<{ apiKey: string; taskId: string }> {
    const app = await platform.bootstrap(name);
    const queued = await run(['deploy', await fixture(), '--no-wait'], app.apiKey);
    const { taskId } = JSON.parse(queued.stdout.toString('utf8')) as { taskId: string };
    await advanceTask(platform.sql, taskId, FAILED);
    return { apiKey: app.apiKey, taskId };
  }

  it('status, piped (JSON by default) and with --json: exact data in JSON with every control escaped, C1 included; stderr shows them', async () => {
    const { apiKey, taskId } = await failedTask('Escapes Json');
    const found: string[] = [];
    for (const args of [
      ['status', taskId],
      ['status', taskId, '--json'],
    ]) {
      const result = await run(args, apiKey);
      expect(result.code).toBe(1);
      found.push(...violations(args.join(' '), result));
      // JSON keeps the data exact: it parses back to what the row holds.
      const task = JSON.parse(result.stdout.toString('utf8'));
      expect(task).toMatchObject({ taskId, status: 'failed', error: FAILED.error, warnings: FAILED.warnings, hazards: FAILED.hazards });
      expect(result.stdout.toString('utf8')).toContain('\\u009b2J\\u009d0;c1 title\\u009c\\u0085');
      const stderr = result.stderr.toString('utf8');
      expect(stderr).toContain(`slipway: Deploy failed at build: build_failed: npm run build exited with 1: ${SHOWN}\n`);
      expect(stderr).toContain(`  line ${SHOWN}\n  Error: ${SHOWN}\n`);
    }
    expect(found).toEqual([]);
  });

  it('status on a terminal (pty), with and without colours: the texts shown escaped, only the CLI’s own colours raw', async () => {
    const { apiKey, taskId } = await failedTask('Escapes Pty');
    const plain = await run(['status', taskId], apiKey, { pty: true });
    const coloured = await run(['status', taskId], apiKey, { pty: true, colour: true });
    const json = await run(['status', taskId, '--json'], apiKey, { pty: true });
    // NO_COLOR and no live line (status without --wait): not one escape sequence at all.
    expect([
      ...violations('status (pty, NO_COLOR)', plain, { pty: true }),
      ...violations('status --json (pty)', json, { pty: true }),
      ...violations('status (pty, colours)', coloured, { pty: true, own: true }),
    ]).toEqual([]);
    expect(coloured.stdout.toString('utf8')).toContain('\x1b[31m✗\x1b[39m'); // the CLI's own colours are still there
    const screen = plain.stdout.toString('utf8').replaceAll('\r\n', '\n');
    expect(screen).toContain(`✗ Deploy failed at build: build_failed: npm run build exited with 1: ${SHOWN} (task ${taskId})`);
    expect(screen).toContain(`  ⚠ build_output_warnings: warn ${SHOWN}\n      detail: warning: ${SHOWN}\n`);
    expect(screen).toContain(`  ▲ high secret_in_source: found ${SHOWN}\n      file: src/${SHOWN}.pem\n`);
    expect(screen).toContain(`  line ${SHOWN}\n  Error: ${SHOWN}\n`);
  });

  it('deploy following the task, on a terminal (live lines, colours) and with --json: same', async () => {
    const found: string[] = [];
    for (const mode of ['pty', 'json'] as const) {
      const app = await platform.bootstrap(`Escapes Deploy ${mode}`);
      const running = run(mode === 'pty' ? ['deploy', await fixture()] : ['deploy', await fixture(), '--json'], app.apiKey, {
        pty: mode === 'pty',
        colour: true,
      });
      const taskId = await waitForTask(app.applicationId);
      // A running step too: the live line shows its name.
      await advanceTask(platform.sql, taskId, {
        status: 'building',
        steps: stepsUpTo(3, { status: 'running' }).map((s) => (s.status === 'running' ? { ...s, name: `build${OSC0}` } : s)),
      });
      await new Promise((r) => setTimeout(r, 600));
      await advanceTask(platform.sql, taskId, FAILED);
      const result = await running;
      expect(result.code).toBe(1);
      found.push(...violations(`deploy (${mode})`, result, { pty: mode === 'pty', own: mode === 'pty' }));
      const text = `${result.stdout.toString('utf8')}${result.stderr.toString('utf8')}`.replaceAll('\r\n', '\n');
      expect(text).toContain(`Error: ${SHOWN}\n`);
      if (mode === 'pty') expect(text).toContain('build\\u001b]0;pwned\\u0007');
    }
    expect(found).toEqual([]);
  });

  async function waitForTask(applicationId: string): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const id = await latestTaskId(platform.sql, applicationId);
      if (id) return id;
      if (Date.now() > deadline) throw new Error('the CLI never created a deployment');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});
