/**
 * Text that came from a build, a tenant or a server, made safe to print on a terminal.
 *
 * The convention (one, everywhere: the build worker's step logs and findings, every line the CLI
 * prints): each C0 control character except newline and tab, DEL, and each C1 control character
 * (U+0080–U+009F) is written as its JSON escape, `\u001b` for ESC, `\u0007` for BEL, `\u009b`
 * for the 8-bit CSI. A terminal then interprets none of it (no clipboard write through OSC 52,
 * no hidden OSC 8 link, no window title, no cursor movement), and a reader still sees that
 * something was there. The JSON form because it is what `--json` output holds for the same
 * characters, and it covers C1, which has no Unicode "control picture" (␛ exists only for C0).
 */

// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** What JSON.stringify leaves raw: it escapes C0 only, never DEL or C1. */
const LEFT_RAW_BY_JSON = /[\u007f-\u009f]/g;

function jsonEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every control character except `\n` and `\t` shown as `\u00xx`, never interpreted. */
export function visibleControls(text: string): string {
  return text.replace(CONTROL, jsonEscape);
}

/**
 * JSON for a terminal or a pipe that may end on one: JSON.stringify, plus DEL and C1 escaped
 * (`\u009b` is valid JSON and parses back to the same character, so the data stays exact).
 */
export function terminalJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(LEFT_RAW_BY_JSON, jsonEscape);
}

/** Every string in `value` (deeply: arrays and plain objects) passed through `visibleControls`. */
export function visibleStrings<T>(value: T): T {
  return mapStrings(value, visibleControls);
}

/** `value` with `map` applied to each string inside it; numbers, booleans and null as they are. */
export function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapStrings(item, map)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map)])) as T;
  return value;
}
