interface Slot<V> {
  value: V;
  bytes: number;
  group: string;
}

/**
 * A least-recently-used map bounded in bytes (each entry says what it costs), with entries in
 * groups (a release) that can be dropped at once. A value bigger than the whole bound is not kept.
 */
export class ByteLru<V> {
  private readonly slots = new Map<string, Slot<V>>();
  private readonly groups = new Map<string, Set<string>>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.slots.size;
  }

  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    // Map keeps insertion order: re-inserting makes this the most recently used.
    this.slots.delete(key);
    this.slots.set(key, slot);
    return slot.value;
  }

  set(group: string, key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.slots.set(key, { value, bytes, group });
    let keys = this.groups.get(group);
    if (!keys) this.groups.set(group, (keys = new Set()));
    keys.add(key);
    this.used += bytes;
    for (const oldest of this.slots.keys()) {
      if (this.used <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    this.used -= slot.bytes;
    const keys = this.groups.get(slot.group);
    keys?.delete(key);
    if (keys?.size === 0) this.groups.delete(slot.group);
  }

  deleteGroup(group: string): void {
    for (const key of [...(this.groups.get(group) ?? [])]) this.delete(key);
  }

  /** Entries per group. */
  groupSizes(): Record<string, number> {
    return Object.fromEntries([...this.groups].map(([group, keys]) => [group, keys.size]));
  }
}
