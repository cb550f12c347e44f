import { mapStrings, terminalJson, visibleControls, visibleStrings } from './terminal-text.js';

/** Every character a terminal may act on: C0 but newline and tab, DEL, C1. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const DANGEROUS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const EVERY_CONTROL = Array.from({ length: 0xa0 }, (_, code) => String.fromCharCode(code))
  .filter((c) => DANGEROUS.test(c))
  .join('');

describe('visibleControls', () => {
  it('shows OSC 52, OSC 8, OSC 0, cursor movement, BEL and C1 as \\u escapes; keeps text, newline and tab', () => {
    const hostile = 'a\x1b]52;c;ZXZpbA==\x07b\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\x1b]0;title\x07\x1b[2A\x1b[31mred\x9b2J\x9d0;t\x9c\r\tend\n';
    expect(visibleControls(hostile)).toBe(
      'a\\u001b]52;c;ZXZpbA==\\u0007b\\u001b]8;;https://evil.example\\u001b\\link\\u001b]8;;\\u001b\\\\u001b]0;title\\u0007\\u001b[2A\\u001b[31mred\\u009b2J\\u009d0;t\\u009c\\u000d\tend\n',
    );
  });

  it('leaves no control character at all but newline and tab (every one of the 0x00–0x9f range tried)', () => {
    const shown = visibleControls(EVERY_CONTROL);
    expect(shown).not.toMatch(DANGEROUS);
    expect(shown).toBe([...EVERY_CONTROL].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''));
  });

  it('changes nothing else: Unicode text, emoji, box drawing and the CLI’s own symbols', () => {
    const text = 'Crème brûlée ✓ ✗ ⚠ ▲ ⠋ █░ 日本語 😀 \\u001b as typed\n\tindented';
    expect(visibleControls(text)).toBe(text);
  });

  it('is idempotent: escaping twice is escaping once', () => {
    expect(visibleControls(visibleControls(EVERY_CONTROL))).toBe(visibleControls(EVERY_CONTROL));
  });
});

describe('terminalJson', () => {
  it('escapes C1 and DEL, which JSON.stringify leaves raw, and the result parses back to the same data', () => {
    const value = { log: `x${EVERY_CONTROL}y`, nested: ['\u009b31m', { '\u009d0;k': 1 }], n: 2, ok: true, none: null };
    expect(JSON.stringify(value)).toMatch(/[\u0080-\u009f]/); // what the platform's own serializer does
    const json = terminalJson(value);
    expect(json).not.toMatch(DANGEROUS);
    expect(json).toContain('\\u009b31m');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('answers null for undefined, as a JSON document must be something', () => {
    expect(terminalJson(undefined)).toBe('null');
  });
});

describe('visibleStrings / mapStrings', () => {
  it('reaches every string in arrays and objects, keys included, and leaves other values alone', () => {
    const finding = { code: 'build_output_warnings', detail: 'warn \x1b]0;t\x07', lines: ['\x07', 3, null, false], '\x1b[k': 'v' };
    expect(visibleStrings(finding)).toEqual({
      code: 'build_output_warnings',
      detail: 'warn \\u001b]0;t\\u0007',
      lines: ['\\u0007', 3, null, false],
      '\\u001b[k': 'v',
    });
    expect(mapStrings({ a: ['b'] }, (s) => s.toUpperCase())).toEqual({ A: ['B'] });
  });
});
