import { mapStrings, visibleControls } from './terminal-text.js';

/*
 * ECMA-48's three shapes of sequence a terminal acts on instead of showing, 7-bit (ESC …) and
 * 8-bit (C1) forms alike. Written out rather than Node's util.stripVTControlCharacters (the
 * ansi-regex pattern): that one matches an OSC only when its text is [-a-zA-Z0-9/#&.:=?%@~_],
 * so `ESC]0;my title BEL` loses `ESC]0;m` and keeps `y title`, and OSC 52's base64 with a `+`
 * is cut the same way.
 */
/** OSC, DCS, SOS, PM, APC: a control string up to ST (ESC \ or U+009C) or, as xterm takes it, BEL. Its text stops at another opener, so one unterminated opener cannot make the scan quadratic. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const CONTROL_STRING = /(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x90\x98\x9c-\x9f]*(?:\x07|\x1b\\|\x9c)/;
/** CSI (ESC [ or U+009B): parameter bytes, intermediate bytes, one final byte. Colours, cursor movement, erasing. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const CSI = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/;
/** Any other escape sequence (ESC c, ESC 7, ESC ( B, ESC # 8…), but not the openers above: an unterminated one stays, to be shown. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const ESCAPE = /\x1b[\x20-\x2f]*[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e]/;
const SEQUENCE = new RegExp(`${CONTROL_STRING.source}|${CSI.source}|${ESCAPE.source}`, 'g');

/** What stays of a line a progress bar redrew with carriage returns: its last non-blank state. */
function lastRedraw(line: string): string {
  if (!line.includes('\r')) return line;
  return (
    line
      .split('\r')
      .filter((part) => part.trim() !== '')
      .pop() ?? ''
  );
}

/**
 * A command's output as a step log keeps it, so that neither the API nor the dashboard nor the
 * CLI ever carries a terminal instruction from a build:
 * - complete escape sequences are removed (colours, cursor movement, erasing, window titles,
 *   OSC 8 links — their text stays, their target goes —, OSC 52 clipboard writes): they are
 *   instructions to a terminal, not text;
 * - a carriage return keeps what a terminal would end on: each line's last non-blank segment
 *   (`50%\r100%` → `100%`; a CRLF line ending → the line);
 * - any control character left (a lone ESC, an unterminated OSC, BEL, backspace, C1) is shown as
 *   `\u00xx` (contract `visibleControls`), never passed on raw.
 * Idempotent: its output has no control character but newline and tab.
 */
export function plainLogText(output: string): string {
  const stripped = output.replace(SEQUENCE, '');
  return visibleControls(stripped.includes('\r') ? stripped.split('\n').map(lastRedraw).join('\n') : stripped);
}

/** Warnings and hazards as they are stored: every string in them made plain (a `detail` quoting the build, a file name). */
export function plainFindings<T>(findings: T): T {
  return mapStrings(findings, plainLogText);
}
