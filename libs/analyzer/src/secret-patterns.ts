/** Well-known credential formats: a match is almost certainly a real key. */
export const KNOWN_SECRET_PATTERNS: { name: string; pattern: RegExp }[] = [
  { name: 'Stripe secret key', pattern: /\b[sr]k_(live|test)_[0-9A-Za-z]{16,}\b/ },
  { name: 'AWS access key id', pattern: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'GitHub token', pattern: /\b(ghp|gho|ghu|ghs|ghr)_[0-9A-Za-z]{30,}\b|\bgithub_pat_[0-9A-Za-z_]{40,}\b/ },
  { name: 'Slack token', pattern: /\bxox[abprs]-[0-9A-Za-z-]{10,}\b/ },
  { name: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { name: 'OpenAI key', pattern: /\bsk-(proj-)?[0-9A-Za-z_-]{32,}\b/ },
  { name: 'private key', pattern: /-----BEGIN ([A-Z]+ )?PRIVATE KEY-----/ },
  { name: 'Slipway key', pattern: /\bslw_(key|pat)_[0-9A-Za-z]{16,}\b/ },
];

/** A string literal assigned to a name that sounds like a credential. */
const ASSIGNED_SECRET =
  /\b([A-Za-z0-9_]*(secret|token|password|passwd|api_?key|apikey|private_?key|auth_?key)[A-Za-z0-9_]*)["']?\s*[:=]\s*["'`]([^"'`\s]{16,})["'`]/gi;

/** Shannon entropy in bits per character. */
export function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

export interface SecretMatch {
  kind: string;
  /** 1-based line number. */
  line: number;
}

/** Known-format keys, and high-entropy literals assigned to credential-like names. */
export function findSecrets(text: string): SecretMatch[] {
  const found: SecretMatch[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  for (const { name, pattern } of KNOWN_SECRET_PATTERNS) {
    const match = new RegExp(pattern.source, 'g').exec(text);
    if (match) found.push({ kind: name, line: lineOf(match.index) });
  }
  for (const match of text.matchAll(ASSIGNED_SECRET)) {
    const value = match[3]!;
    const line = lineOf(match.index);
    if (found.some((f) => f.line === line)) continue;
    if (entropy(value) >= 3.5 && !/^(process\.env|import\.meta)/.test(value)) found.push({ kind: `high-entropy value assigned to ${match[1]}`, line });
  }
  return found;
}

/** Names that hold something private: a public prefix on such a name ships it to browsers. */
export const SENSITIVE_NAME = /SECRET|PASSWORD|PASSWD|PRIVATE|TOKEN|(^|_)KEY($|_)|API_?KEY|CREDENTIAL|DATABASE_URL/i;

/** Prefixes that bundlers inline into client code. */
export const PUBLIC_PREFIXES = ['VITE_', 'PUBLIC_', 'NEXT_PUBLIC_', 'REACT_APP_'];

export function isPublicName(name: string): boolean {
  return PUBLIC_PREFIXES.some((prefix) => name.startsWith(prefix));
}
