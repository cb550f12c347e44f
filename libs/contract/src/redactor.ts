import { plainLogText } from './plain-log-text.js';

/** Values shorter than this are not redacted: they would mangle ordinary words in logs. */
const MIN_REDACTED_LENGTH = 4;

/**
 * Replaces every secret value (plain, base64, URL-encoded, and as a step log shows it once made
 * plain: a value holding a control character appears with it escaped) in text with `[redacted:NAME]`.
 */
export class Redactor {
  private readonly forms: { form: string; label: string }[] = [];

  constructor(secrets: { name: string; value: string }[]) {
    for (const { name, value } of secrets) {
      if (value.length < MIN_REDACTED_LENGTH) continue;
      const variants = new Set([
        value,
        Buffer.from(value).toString('base64'),
        Buffer.from(value).toString('base64url'),
        encodeURIComponent(value),
        JSON.stringify(value).slice(1, -1),
        plainLogText(value),
      ]);
      // A value of several lines also line by line: live output is redacted a line at a time.
      if (value.includes('\n')) for (const line of value.split('\n')) variants.add(line.replace(/\r$/, ''));
      for (const form of variants) if (form.length >= MIN_REDACTED_LENGTH) this.forms.push({ form, label: `[redacted:${name}]` });
    }
    // Longest first, so a value containing another is replaced whole.
    this.forms.sort((a, b) => b.form.length - a.form.length);
  }

  redact(text: string): string {
    let out = text;
    for (const { form, label } of this.forms) if (out.includes(form)) out = out.split(form).join(label);
    return out;
  }
}

/** Keeps the last `maxBytes` characters of a log, cut at a line start when possible. */
export function tail(text: string, maxChars = 8000): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(-maxChars);
  const newline = cut.indexOf('\n');
  return `…\n${newline >= 0 && newline < 200 ? cut.slice(newline + 1) : cut}`;
}
