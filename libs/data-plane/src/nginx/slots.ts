import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** A loopback port nobody listens on now (`port` itself when given and free), or undefined. */
function freePort(port = 0): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

export interface Slots {
  a: number;
  b: number;
}

/**
 * Two loopback ports per Node application, both in nginx's config: the live release listens on
 * one, the next release is started on the other, and the swap flips which one nginx uses (a
 * marker file) without a reload. Kept in a file so a restarted edge renders the same config.
 */
export class SlotPorts {
  private slots = new Map<string, Slots>();
  private dirty = false;

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    const text = await readFile(this.file, 'utf8').catch(() => '{}');
    try {
      this.slots = new Map(Object.entries(JSON.parse(text) as Record<string, Slots>).filter(([, s]) => Number.isInteger(s.a) && Number.isInteger(s.b)));
    } catch {
      this.slots = new Map();
    }
  }

  /** The application's slots, one of them `livePort` (reassigned when the live release is on neither: a reload then). */
  async slotsFor(applicationId: string, livePort: number): Promise<Slots> {
    const current = this.slots.get(applicationId);
    if (current && (current.a === livePort || current.b === livePort)) return current;
    const keep = current && current.b !== livePort ? current.b : undefined;
    const b = (keep !== undefined ? await freePort(keep) : undefined) ?? (await freePort());
    if (b === undefined) throw new Error('no free loopback port for a slot');
    const slots = { a: livePort, b };
    this.slots.set(applicationId, slots);
    this.dirty = true;
    return slots;
  }

  /** The slot a new release should listen on (the one not live), when it is free right now. */
  async freeSlot(applicationId: string, livePort: number | undefined): Promise<number | undefined> {
    const slots = this.slots.get(applicationId);
    if (!slots || livePort === undefined) return undefined;
    const other = livePort === slots.a ? slots.b : livePort === slots.b ? slots.a : undefined;
    return other === undefined ? undefined : freePort(other);
  }

  async save(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    await writeFile(this.file, JSON.stringify(Object.fromEntries(this.slots)), { mode: 0o600 });
  }
}

/** Established TCP connections (IPv4/IPv6) with `port` as their remote port: what is still talking to a release. */
export async function connectionsTo(port: number): Promise<number> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'latin1').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '01' && fields[2]?.endsWith(`:${hex}`)) count += 1;
    }
  }
  return count;
}
