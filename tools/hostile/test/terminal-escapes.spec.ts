/**
 * Terminal escapes (issue 29): a tenant's build prints what would act on its owner's terminal —
 * OSC 52 (writes the clipboard), OSC 8 (a hidden link), OSC 0 (the window title), cursor movement,
 * C1 controls, colours, a bare carriage return, BEL — on stdout and stderr, in `warning` lines and
 * in its failure, and its build command carries some too (fixtures/terminal-escapes). The owner
 * runs `slipway deploy` and `slipway status`, piped (JSON by default) and with `--json`, and on a
 * terminal (a pty through `script`). Every byte the CLI writes is checked: no control character
 * but newline and tab — on a pty, only the CLI's own colours and live-line redraw, and the pty's
 * own CRLF. The API's step logs, warnings, hazards and error carry no control character either,
 * and what the sequences surrounded is still there to read.
 */
import { rm } from 'node:fs/promises';
import { CLI_MAIN, CLI_OWN_SEQUENCES, PTY_LINE_ENDINGS, runForBytes, terminalControls, type RawRun } from '@slipway/testing';
import { expectNone } from './support/evidence.js';
import { fixtureCopy } from './support/host.js';
import { HostilePlatform, type Account, type Task } from './support/platform.js';

type Mode = 'piped' | 'piped --json' | 'pty' | 'pty --json';
const MODES: Mode[] = ['piped', 'piped --json', 'pty', 'pty --json'];

/** Every string inside a value, with where it is (`steps[3].log`), for the API check. */
function stringsIn(value: unknown, at: string, out: [string, string][] = []): [string, string][] {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((item, i) => stringsIn(item, `${at}[${i}]`, out));
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) stringsIn(item, `${at}.${key}`, out);
  return out;
}

describe('a build printing terminal escapes, followed with slipway deploy / status', () => {
  let platform: HostilePlatform | undefined;
  let tenant: Account;
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await HostilePlatform.start('escapes');
    tenant = await platform.bootstrap('escapes@hostile.example', 'Terminal Escapes');
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  /** The real `slipway` as the owner runs it: piped (JSON by default) or on a pty (colours on), its exact bytes kept. */
  function slipway(args: string[], mode: Mode): Promise<RawRun> {
    const env = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      TERM: 'xterm-256color',
      SLIPWAY_URL: `http://127.0.0.1:${platform!.ports.gateway}`,
      SLIPWAY_API_KEY: tenant.apiKey,
      SLIPWAY_POLL_INTERVAL_MS: '200',
    };
    return runForBytes(['node', CLI_MAIN, ...args, ...(mode.endsWith('--json') ? ['--json'] : [])], {
      env,
      pty: mode.startsWith('pty'),
      timeoutMs: 10 * 60_000,
    });
  }

  /** Control characters in what the CLI wrote; on a pty, less the pty's CRLF and the CLI's own sequences. */
  function written(what: string, result: RawRun, mode: Mode): string[] {
    const allowed = mode.startsWith('pty') ? [...PTY_LINE_ENDINGS, ...CLI_OWN_SEQUENCES] : [];
    return [
      ...terminalControls(result.stdout, allowed).map((v) => `${what} stdout: ${v}`),
      ...terminalControls(result.stderr, allowed).map((v) => `${what} stderr: ${v}`),
    ];
  }

  /** The task the CLI reported: from its JSON (piped, or --json), else found by the API's newest deployment. */
  async function deploy(mode: Mode, fail: boolean): Promise<{ result: RawRun; task: Task }> {
    const dir = await fixtureCopy('terminal-escapes', fail ? { 'fail-on-purpose': 'yes\n' } : {});
    dirs.push(dir);
    const result = await slipway(['deploy', dir], mode);
    const text = result.stdout.toString('utf8');
    // On a pty stderr arrives on the same stream: the JSON document is the line that starts with {.
    const json = text.split(/\r?\n/).find((line) => line.startsWith('{"'));
    const id = mode === 'pty' ? /\(task ([0-9a-f-]{36})\)/.exec(text)?.[1] : json && (JSON.parse(json) as Task).taskId;
    if (!id)
      throw new Error(
        `no task id in what deploy (${mode}) wrote: ${JSON.stringify(text.slice(0, 2000))} ${JSON.stringify(result.stderr.toString('utf8').slice(-2000))}`,
      );
    return { result, task: await platform!.task(tenant, id) };
  }

  it('no control character reaches the terminal from deploy or status, in any mode; the API keeps none', async () => {
    const violations: string[] = [];
    const evidence: Record<string, unknown> = {};
    // Two deploys that succeed and two that fail, across the four ways of running the CLI.
    const runs = [
      { mode: 'pty' as const, fail: false },
      { mode: 'piped --json' as const, fail: false },
      { mode: 'piped' as const, fail: true },
      { mode: 'pty --json' as const, fail: true },
    ];
    const tasks: (Task & { label: string })[] = [];
    for (const { mode, fail } of runs) {
      const started = performance.now();
      const { result, task } = await deploy(mode, fail);
      process.stdout.write(
        `terminal-escapes: deploy (${mode}) ${task.status} in ${((performance.now() - started) / 1000).toFixed(1)} s, exit ${result.code}\n`,
      );
      if (task.status !== (fail ? 'failed' : 'succeeded'))
        violations.push(`deploy (${mode}) ${task.status}, expected ${fail ? 'failed' : 'succeeded'}: ${JSON.stringify(task.error)}`);
      if (result.code !== (fail ? 1 : 0)) violations.push(`deploy (${mode}) exited ${result.code}`);
      violations.push(...written(`deploy (${mode})`, result, mode));
      evidence[`deploy (${mode})`] = { stdout: result.stdout.toString('utf8').slice(-3000), stderr: result.stderr.toString('utf8').slice(-3000) };
      tasks.push({ ...task, label: `${task.status} (deployed ${mode})` });
    }
    for (const task of tasks) {
      for (const mode of MODES) {
        const result = await slipway(['status', task.taskId!], mode);
        violations.push(...written(`status of the task ${task.label} (${mode})`, result, mode));
      }
    }

    // The API: no control character in any step log, warning, hazard or error (the spec may hold the build command exactly: it is data, JSON-escaped).
    for (const task of tasks) {
      const { steps, warnings, hazards, error } = task;
      for (const [at, text] of stringsIn({ steps, warnings, hazards, error }, `task ${task.label}`)) {
        for (const found of terminalControls(text)) violations.push(`API ${at}: ${found}`);
      }
    }
    // What the sequences surrounded is still there: the text, a redrawn line's last state, a lone ESC shown.
    const [succeeded, , failed] = tasks;
    const build = succeeded?.steps?.find((s) => s.name === 'build')?.log ?? '';
    for (const line of [
      'osc52  clipboard',
      'osc8 innocent link end',
      'osc0  title',
      'cursor  moved',
      'c1   \\u0085 nel',
      'colour red orange',
      'progress 100%',
      'bell\\u0007 backspace\\u0008 lone esc \\u001b',
      'WARN on stderr  ',
    ]) {
      if (!build.includes(line)) violations.push(`the build log lacks ${JSON.stringify(line)}`);
    }
    if (build.includes('progress  10%')) violations.push('the build log kept a redrawn state of the progress line');
    const detail = succeeded?.warnings?.find((w) => w.code === 'build_output_warnings')?.detail ?? '';
    if (!detail.includes('warning: deprecated thing\n')) violations.push(`build_output_warnings detail: ${JSON.stringify(detail)}`);
    if (!/failed on purpose/.test(failed?.error?.message ?? '')) violations.push(`the failure's message: ${JSON.stringify(failed?.error)}`);
    const failedLog = failed?.steps?.find((s) => s.name === 'build')?.log ?? '';
    if (!failedLog.includes('unterminated \\u001b]52;c;')) violations.push('the unterminated OSC 52 is not shown in the failed build log');
    // And the CLI showed the failure to its reader.
    const piped = String(evidence['deploy (piped)'] && (evidence['deploy (piped)'] as { stderr: string }).stderr);
    if (!piped.includes('Error: failed on purpose')) violations.push('deploy (piped) stderr lacks the failure line');

    evidence['tasks'] = tasks.map(({ label, steps, warnings, hazards, error, spec }) => ({
      label,
      error,
      warnings,
      hazards,
      build: spec?.['commands'],
      log: steps?.find((s) => s.name === 'build')?.log,
    }));
    expectNone('a build reached the owner’s terminal, or the API kept a control character', violations, evidence);
  }, 1_200_000);
});
