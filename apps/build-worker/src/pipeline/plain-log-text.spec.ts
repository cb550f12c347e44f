import { plainFindings, plainLogText } from './plain-log-text.js';
import { Redactor } from './redactor.js';
import { StepRecorder } from './step-recorder.js';

/** Anything a terminal would act on: every C0 control but newline and tab, DEL, C1. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** What a hostile build prints (the hostile suite's fixture prints the same). */
const HOSTILE = [
  'clipboard \x1b]52;c;cm0gLXJmIH4vKw==\x07 written',
  'a \x1b]8;;https://evil.example/\x1b\\hidden link\x1b]8;;\x1b\\ here',
  '\x1b]0;pwned title\x07title set',
  'up\x1b[3A\x1b[2K\x1b[?25l\x1b[10;20Hmoved',
  '\x1b[1;31mred\x1b[0m and \x1b[38;5;208morange\x1b[39m',
  'c1 \x9b2J\x9d0;c1 title\x9c csi',
  'progress  10%\rprogress  50%\rprogress 100%',
  'bell\x07 backspace\b nul\0 lone esc \x1b',
  'windows line\r',
].join('\n');

describe('plainLogText', () => {
  it('removes whole escape sequences, keeps a redrawn line’s last state, shows what is left as \\u00xx', () => {
    expect(plainLogText(HOSTILE).split('\n')).toEqual([
      'clipboard  written',
      'a hidden link here',
      'title set',
      'upmoved',
      'red and orange',
      'c1  csi',
      'progress 100%',
      'bell\\u0007 backspace\\u0008 nul\\u0000 lone esc \\u001b',
      'windows line',
    ]);
  });

  it('leaves no control character but newline and tab', () => {
    expect(plainLogText(HOSTILE)).not.toMatch(CONTROL);
    expect(plainLogText('a\tb\n')).toBe('a\tb\n');
  });

  it('shows an unterminated control string instead of swallowing the rest of the log', () => {
    expect(plainLogText('before \x1b]52;c;ZXZpbA== never ended\nnext line')).toBe('before \\u001b]52;c;ZXZpbA== never ended\nnext line');
    expect(plainLogText('\x9d0;open')).toBe('\\u009d0;open');
  });

  it('keeps every ordinary character, Unicode included', () => {
    const text = 'npm warn deprecated inflight@1.0.6 ✓ ⚠ 日本語 😀 {"a":[1,2]} [brackets] ~ \\ /\n';
    expect(plainLogText(text)).toBe(text);
  });

  it('is idempotent', () => {
    expect(plainLogText(plainLogText(HOSTILE))).toBe(plainLogText(HOSTILE));
  });

  it('stays linear on a flood of unterminated openers (200 000 in ~50 ms; a text that ran on past other openers took 0.7 s for 20 000, growing with the square)', () => {
    const flood = '\x9d'.repeat(100_000) + '\x1b]'.repeat(100_000);
    const started = performance.now();
    expect(plainLogText(flood)).not.toMatch(CONTROL);
    const ms = performance.now() - started;
    process.stdout.write(`plainLogText: 200 000 unterminated openers in ${ms.toFixed(0)} ms\n`);
    expect(ms).toBeLessThan(5000);
  });

  it('reaches every string of a finding (plainFindings)', () => {
    const warnings = [
      { code: 'build_output_warnings', message: 'The build printed 1 warning line', detail: 'warn: \x1b]52;c;eA==\x07 \x1b[33mdeprecated\x1b[39m' },
    ];
    expect(plainFindings(warnings)).toEqual([{ code: 'build_output_warnings', message: 'The build printed 1 warning line', detail: 'warn:  deprecated' }]);
  });
});

describe('StepRecorder: a step log as it is kept', () => {
  const recorder = () => new StepRecorder(async () => true);

  it('keeps the build’s output plain, and redacts a secret a colour code split or a control character escaped', async () => {
    const steps = recorder();
    steps.useRedactor(
      new Redactor([
        { name: 'API_TOKEN', value: 'tok-1234567' },
        { name: 'ODD', value: 'od\x01d-value' },
      ]),
    );
    await steps.run('build', async (log) => {
      log(HOSTILE);
      log('token tok-\x1b[1m1234567\x1b[0m, odd od\x01d-value');
    });
    const build = steps.steps.find((s) => s.name === 'build')!;
    expect(build.status).toBe('succeeded');
    expect(build.log).not.toMatch(CONTROL);
    expect(build.log).toContain('clipboard  written\na hidden link here\n');
    expect(build.log).toContain('token [redacted:API_TOKEN], odd [redacted:ODD]');
  });

  it('a failed step: its failure log and message are kept plain too', async () => {
    const steps = recorder();
    await expect(
      steps.run('install', async (log) => {
        log('\x1b]0;title\x07installing');
        throw new Error('exited with 1: \x1b]52;c;eA==\x07 \x9b2J');
      }),
    ).rejects.toThrow();
    const install = steps.steps.find((s) => s.name === 'install')!;
    expect(install.log).toBe('installing\nexited with 1:  \n');
    expect(steps.plain('why: \x1b[31mError\x1b[0m \x07')).toBe('why: Error \\u0007');
  });
});
