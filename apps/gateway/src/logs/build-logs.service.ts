import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { buildLogChannel, buildLogList, redisConnection, type BuildLogChunk, type Channel } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

type Listener = (chunk: BuildLogChunk) => void;

/**
 * Live build output of deployments, as the build worker publishes it (plain and redacted before
 * it left the worker): one Redis subscriber for this gateway process, fanned out to its
 * followers; a follower first gets what the capped list kept, then the published chunks not
 * already sent (by attempt and sequence number, so the hand-over neither repeats nor skips).
 */
@Injectable()
export class BuildLogsService implements OnModuleDestroy {
  private readonly logger = new Logger('BuildLogs');
  private subscriber?: Redis;
  private reader?: Redis;
  /** By channel name: the channel and this process's followers of it. */
  private readonly listeners = new Map<string, { channel: Channel<BuildLogChunk>; followers: Set<Listener> }>();

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  private connections(): { subscriber: Redis; reader: Redis } {
    if (!this.subscriber || !this.reader) {
      this.subscriber = redisConnection(this.config.REDIS_URL, 'subscriber');
      // Made when the first follower comes, and used at once: connected now, not lazily.
      this.reader = redisConnection(this.config.REDIS_URL, 'command', { lazyConnect: false });
      for (const redis of [this.subscriber, this.reader]) redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
      this.subscriber.on('message', (name: string, message: string) => {
        const entry = this.listeners.get(name);
        if (!entry) return;
        const chunk = entry.channel.decode(message);
        for (const listener of entry.followers) listener(chunk);
      });
    }
    return { subscriber: this.subscriber, reader: this.reader };
  }

  /** Calls `send` with every chunk of the deployment's output, kept and live, until the returned stop is called. */
  async follow(deploymentId: string, send: (chunk: BuildLogChunk) => void): Promise<() => Promise<void>> {
    const { subscriber, reader } = this.connections();
    const channel = buildLogChannel(this.config.QUEUE_PREFIX, deploymentId);
    let last = { attempt: 0, seq: 0 };
    let replaying: BuildLogChunk[] | null = [];
    const deliver = (chunk: BuildLogChunk) => {
      if (chunk.attempt < last.attempt || (chunk.attempt === last.attempt && chunk.seq <= last.seq)) return;
      last = { attempt: chunk.attempt, seq: chunk.seq };
      send(chunk);
    };
    const listener: Listener = (chunk) => (replaying ? replaying.push(chunk) : deliver(chunk));
    let entry = this.listeners.get(channel.name);
    if (!entry) {
      entry = { channel, followers: new Set() };
      this.listeners.set(channel.name, entry);
      await subscriber.subscribe(channel.name);
    }
    const set = entry.followers;
    set.add(listener);
    // Subscribed first, read the list second: a chunk published in between is in one or both, sent once.
    const kept = (await reader.lrange(buildLogList(this.config.QUEUE_PREFIX, deploymentId), 0, -1)).map((m) => channel.decode(m));
    const newest = Math.max(0, ...kept.map((c) => c.attempt));
    for (const chunk of kept) if (chunk.attempt === newest) deliver(chunk);
    for (const chunk of replaying) deliver(chunk);
    replaying = null;
    return async () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(channel.name) === entry) {
        this.listeners.delete(channel.name);
        await subscriber.unsubscribe(channel.name).catch(() => undefined);
      }
    };
  }

  async onModuleDestroy(): Promise<void> {
    this.subscriber?.disconnect();
    this.reader?.disconnect();
  }
}
