import { StringDecoder } from 'node:string_decoder';
import { buildLogChannel, buildLogList, type BuildLogChunk } from '@slipway/messaging';
import type { Redis } from 'ioredis';

/** Batches are sent at most this often (a chatty install is a few messages a second, not one per line). */
const FLUSH_MS = 100;
/** Chunks kept for a follower that comes late, and how long. */
const KEPT_CHUNKS = 2000;
const KEPT_SECONDS = 3600;
/** A line longer than this (no newline) is not shown live: it could not be redacted whole. */
const MAX_CARRY = 64 * 1024;

/**
 * One deployment attempt's live build output: whole lines, made plain and redacted by `clean`
 * (the step recorder's rule: what the deployment row keeps, never raw text), published on Redis
 * (`buildLogChannel`) and kept in a capped, expiring list (`buildLogList`). Nothing goes to
 * Postgres: the step's log tail there is still written once, when the step ends. Best effort: a
 * Redis hiccup loses live lines, never the build.
 */
export class BuildLogFeed {
  private seq = 0;
  private pending: { step: string; text: string }[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly deploymentId: string,
    private readonly attempt: number,
    private readonly clean: (text: string) => string,
  ) {}

  /** A sink for one command's raw output in `step`: cut into whole lines, cleaned, queued. */
  sink(step: string): (chunk: Buffer | string) => void {
    const decoder = new StringDecoder('utf8');
    let carry = '';
    let skipping = false;
    return (chunk) => {
      const text = carry + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
      const end = text.lastIndexOf('\n') + 1;
      carry = text.slice(end);
      let whole = text.slice(0, end);
      if (skipping && end > 0) {
        // The rest of the over-long line ends here.
        whole = whole.slice(whole.indexOf('\n') + 1);
        skipping = false;
      }
      if (carry.length > MAX_CARRY) {
        whole += '[slipway] a line longer than 64 KiB is not shown live (the step log keeps its end)\n';
        carry = '';
        skipping = true;
      }
      if (whole) this.push(step, this.clean(whole));
    };
  }

  private push(step: string, text: string): void {
    this.pending.push({ step, text });
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Sends what is queued (also called when the attempt ends). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
    if (!batch.length) return;
    const list = buildLogList(this.prefix, this.deploymentId);
    const channel = buildLogChannel(this.prefix, this.deploymentId);
    const multi = this.redis.multi();
    for (const { step, text } of batch) {
      const chunk: BuildLogChunk = { attempt: this.attempt, seq: ++this.seq, step, text };
      const message = channel.encode(chunk);
      multi.rpush(list, message).publish(channel.name, message);
    }
    multi.ltrim(list, -KEPT_CHUNKS, -1).expire(list, KEPT_SECONDS);
    await multi.exec().catch(() => undefined);
  }
}
