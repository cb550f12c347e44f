/**
 * Every value sent under exactly `name` in a Cookie header, in order. Names are compared exactly
 * (case-sensitive, as RFC 6265 says): `__secure-x` is another cookie than `__Secure-x`. Whitespace
 * around names and values is not part of them; a value is kept as sent (quotes included).
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/**
 * The value of a cookie that must be unambiguous: null when it is absent or sent more than once.
 * Two cookies of one name mean one of them was set by someone else (a sibling host under a shared
 * parent domain, "cookie tossing"), and the browser's order does not say which: neither is used.
 */
export function soleCookie(header: string | undefined, name: string): string | null {
  const values = cookieValues(header, name);
  return values.length === 1 ? values[0]! : null;
}
