export interface EnvMerge {
  text: string;
  added: string[];
  replaced: string[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=/;

/** `KEY=value` lines of an env text, by key (the last one wins, as dotenv reads it). */
export function parseEnvLines(text: string): Map<string, string> {
  const lines = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const key = ASSIGNMENT.exec(line)?.[1];
    if (key) lines.set(key, line.trim());
  }
  return lines;
}

/**
 * Merges `incoming` (the platform's `KEY=value` lines) into an existing env file's text without
 * ever repeating a key: a key already present is replaced in place (its first line; any later
 * line with the same key is dropped, since it would override the new value), new keys are
 * appended at the end. Comments, blank lines, other keys and the file's line endings stay.
 */
export function mergeEnvFile(existing: string, incoming: string): EnvMerge {
  const updates = parseEnvLines(incoming);
  const eol = existing.includes('\r\n') ? '\r\n' : '\n';
  const lines = existing === '' ? [] : existing.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of lines) {
    const key = ASSIGNMENT.exec(line)?.[1];
    if (key && updates.has(key)) {
      if (!seen.has(key)) out.push(updates.get(key)!);
      seen.add(key);
      continue;
    }
    out.push(line);
  }
  const added = [...updates.keys()].filter((key) => !seen.has(key));
  for (const key of added) out.push(updates.get(key)!);
  return { text: out.length ? `${out.join(eol)}${eol}` : '', added, replaced: [...seen] };
}
