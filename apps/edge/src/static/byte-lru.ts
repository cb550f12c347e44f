interface Slot<V> {
  group: string;
  key: string;
  value: V;
  bytes: number;
  /** Read since eviction last passed it (CLOCK's reference bit). */
  referenced: boolean;
}

/**
 * A map bounded in bytes (each entry says what it costs), evicting the least recently used
 * first — approximately: the CLOCK (second chance) algorithm, so a hit only sets a flag instead
 * of reordering, and eviction gives an entry read since it was last passed over one more round.
 * Entries live in groups (a release) that can be dropped at once, and are looked up by group and
 * key without building a combined key. A value bigger than the whole bound is not kept.
 */
export class ByteLru<V> {
  private readonly groups = new Map<string, Map<string, Slot<V>>>();
  /** Every slot, oldest insertion first (a Set keeps insertion order; slots are compared by identity). */
  private readonly order = new Set<Slot<V>>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.order.size;
  }

  get(group: string, key: string): V | undefined {
    const slot = this.groups.get(group)?.get(key);
    if (!slot) return undefined;
    slot.referenced = true;
    return slot.value;
  }

  set(group: string, key: string, value: V, bytes: number): void {
    const existing = this.groups.get(group)?.get(key);
    if (existing) this.remove(existing);
    if (bytes > this.maxBytes) return;
    let slots = this.groups.get(group);
    if (!slots) this.groups.set(group, (slots = new Map()));
    const slot: Slot<V> = { group, key, value, bytes, referenced: false };
    slots.set(key, slot);
    this.order.add(slot);
    this.used += bytes;
    this.evict();
  }

  deleteGroup(group: string): void {
    for (const slot of [...(this.groups.get(group)?.values() ?? [])]) this.remove(slot);
  }

  /** Entries per group. */
  groupSizes(): Record<string, number> {
    return Object.fromEntries([...this.groups].map(([group, slots]) => [group, slots.size]));
  }

  private evict(): void {
    // A slot moved to the back is met again in this same loop, unreferenced: it ends.
    for (const slot of this.order) {
      if (this.used <= this.maxBytes) return;
      if (slot.referenced) {
        slot.referenced = false;
        this.order.delete(slot);
        this.order.add(slot);
      } else this.remove(slot);
    }
  }

  private remove(slot: Slot<V>): void {
    if (!this.order.delete(slot)) return;
    this.used -= slot.bytes;
    const slots = this.groups.get(slot.group);
    slots?.delete(slot.key);
    if (slots?.size === 0) this.groups.delete(slot.group);
  }
}
