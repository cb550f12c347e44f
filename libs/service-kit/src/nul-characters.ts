/**
 * Where a NUL (U+0000) is in a parsed JSON value, if anywhere: the keys leading to the string (or
 * the key) that holds one, `[]` for a bare string, `null` when there is none. Postgres `text` and
 * `jsonb` cannot hold a NUL, so a request that carries one to a query fails there (a 500) unless it
 * is refused first as invalid. The walk keeps its own stack: a value nested thousands deep (a body
 * is a tree, from JSON) cannot overflow Node's.
 */
export function nulPath(value: unknown): string[] | null {
  type Entry = { value: unknown; key: string | null; parent: Entry | null };
  const pathOf = (entry: Entry): string[] => {
    const keys: string[] = [];
    for (let e: Entry | null = entry; e && e.key !== null; e = e.parent) keys.push(e.key.replaceAll('\u0000', '\\0'));
    return keys.reverse();
  };
  const stack: Entry[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    if (typeof entry.value === 'string') {
      if (entry.value.includes('\u0000')) return pathOf(entry);
    } else if (entry.value !== null && typeof entry.value === 'object') {
      for (const [key, child] of Object.entries(entry.value)) {
        const next = { value: child, key, parent: entry };
        if (key.includes('\u0000')) return pathOf(next);
        stack.push(next);
      }
    }
  }
  return null;
}
