/** `target` with one more query parameter (the emailed links and OAuth error redirects). */
export function withQuery(target: string, name: string, value: string): string {
  return `${target}${target.includes('?') ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}
