import { mkdir, open, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Application ids are UUIDs: nothing else names a file here. */
const APPLICATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LOG_SUFFIX = '.requests';
const SCORES_FILE = 'scores.json';

export interface UsageMeterOptions {
  /** A request this old counts half (the score is a decaying request count). */
  halfLifeMs: number;
  now?: () => number;
}

interface Persisted {
  version: 1;
  /** When `scores` were last decayed to. */
  at: number;
  scores: Record<string, number>;
  /** When each application last had a release switched to by a deploy (the tie-break). */
  deployedAt: Record<string, number>;
}

/** The kept table, or undefined when it is not one (a torn or foreign file: the scores start afresh). */
function parseKept(text: string): Persisted | undefined {
  try {
    return JSON.parse(text) as Persisted;
  } catch {
    return undefined;
  }
}

/**
 * How much each application is used, kept across restarts so that a whole-platform restart
 * starts the most used apps first (start-queue.ts). The measure is requests: nginx (the data
 * plane under `pnpm start`) appends one byte per proxied request to `<dir>/<application id>.requests`
 * (an `access_log` with an empty format, buffered: at most 5 s or 4 KiB behind, flushed when
 * nginx stops), and the Node edge counts the requests it proxies itself (`count`).
 * `fold` turns the bytes into a score — requests, each counting half after `halfLifeMs`, so
 * yesterday's busy app gives way to today's — truncates the files, and writes the scores to
 * `<dir>/scores.json` (atomically): they survive a restart, the files' unread bytes too.
 * Applications never requested rank by their last deploy, most recent first.
 */
export class UsageMeter {
  private scores = new Map<string, number>();
  private deployedAt = new Map<string, number>();
  private at: number;
  private readonly pending = new Map<string, number>();
  private readonly now: () => number;
  private timer?: NodeJS.Timeout;
  private folding?: Promise<void>;

  constructor(
    private readonly dir: string,
    private readonly options: UsageMeterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.at = this.now();
  }

  /** The file nginx appends a byte to per request of this application (undefined: not an application id). */
  logFor(applicationId: string): string | undefined {
    return APPLICATION_ID.test(applicationId) ? join(this.dir, `${applicationId}${LOG_SUFFIX}`) : undefined;
  }

  /** Requests the Node edge proxied (or answered "starting") itself. */
  count(applicationId: string, requests = 1): void {
    this.pending.set(applicationId, (this.pending.get(applicationId) ?? 0) + requests);
  }

  /** A deploy switched the application to a new release (the order among apps never requested); written down at once. */
  deployed(applicationId: string): Promise<void> {
    this.deployedAt.set(applicationId, this.now());
    return this.fold();
  }

  /** Forgets applications that are gone (nothing else would remove them from the kept table). */
  keepOnly(applicationIds: ReadonlySet<string>): void {
    for (const id of [...this.scores.keys(), ...this.deployedAt.keys()]) {
      if (applicationIds.has(id)) continue;
      this.scores.delete(id);
      this.deployedAt.delete(id);
    }
  }

  /** The application's decayed request count as of the last fold. */
  score(applicationId: string): number {
    return this.scores.get(applicationId) ?? 0;
  }

  /** Negative when `a` should start before `b`: more used first, then more recently deployed. */
  readonly compare = (a: string, b: string): number => {
    const byScore = this.score(b) - this.score(a);
    if (byScore !== 0) return byScore;
    return (this.deployedAt.get(b) ?? 0) - (this.deployedAt.get(a) ?? 0);
  };

  /** Reads the kept scores (missing or unreadable: starts from none), then counts what nginx wrote meanwhile. */
  async load(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const kept = await readFile(join(this.dir, SCORES_FILE), 'utf8').then(parseKept, () => undefined);
    if (kept?.version === 1 && Number.isFinite(kept.at)) {
      this.at = kept.at;
      this.scores = new Map(Object.entries(kept.scores ?? {}).filter(([id, s]) => APPLICATION_ID.test(id) && Number.isFinite(s) && s > 0));
      this.deployedAt = new Map(Object.entries(kept.deployedAt ?? {}).filter(([id, t]) => APPLICATION_ID.test(id) && Number.isFinite(t)));
    }
    await this.fold();
  }

  /** Folds every `intervalMs` (timer unref'd: it never keeps the process alive). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.fold().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and folds one last time. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.fold().catch(() => undefined);
  }

  /** Counts and empties nginx's files, decays the scores to now, adds the new requests, and writes them down. */
  fold(): Promise<void> {
    // One at a time, each after the last (two would count the same bytes or write in either order).
    const next = (this.folding ?? Promise.resolve()).catch(() => undefined).then(() => this.foldOnce());
    this.folding = next;
    return next;
  }

  private async foldOnce(): Promise<void> {
    const fresh = new Map(this.pending);
    this.pending.clear();
    for (const [id, bytes] of await this.drainLogs()) fresh.set(id, (fresh.get(id) ?? 0) + bytes);
    const now = this.now();
    const factor = 2 ** (-Math.max(0, now - this.at) / this.options.halfLifeMs);
    const next = new Map<string, number>();
    for (const [id, score] of this.scores) next.set(id, score * factor);
    for (const [id, requests] of fresh) next.set(id, (next.get(id) ?? 0) + requests);
    // A score below a thousandth of a request is none: the table stays as small as the apps in use.
    for (const [id, score] of next) if (score < 0.001) next.delete(id);
    this.scores = next;
    this.at = now;
    await this.persist();
  }

  /** Each application's bytes (= requests) in nginx's files, which are emptied (nginx appends, so it goes on at offset 0). */
  private async drainLogs(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith(LOG_SUFFIX)) continue;
      const id = name.slice(0, -LOG_SUFFIX.length);
      if (!APPLICATION_ID.test(id)) continue;
      const file = await open(join(this.dir, name), 'r+').catch(() => undefined);
      if (!file) continue;
      try {
        const { size } = await file.stat();
        if (size > 0) {
          await file.truncate(0);
          counts.set(id, size);
        }
      } finally {
        await file.close();
      }
    }
    return counts;
  }

  private async persist(): Promise<void> {
    const body: Persisted = { version: 1, at: this.at, scores: Object.fromEntries(this.scores), deployedAt: Object.fromEntries(this.deployedAt) };
    const path = join(this.dir, SCORES_FILE);
    await writeFile(`${path}.tmp`, JSON.stringify(body), { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }
}
