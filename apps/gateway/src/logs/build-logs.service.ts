import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { buildLogChannel, buildLogList, type BuildLogChunk } from '@slipway/queue';
import { Redis } from 'ioredis';
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
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  private connections(): { subscriber: Redis; reader: Redis } {
    if (!this.subscriber || !this.reader) {
      this.subscriber = new Redis(this.config.REDIS_URL, { maxRetriesPerRequest: null });
      this.reader = new Redis(this.config.REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
      for (const redis of [this.subscriber, this.reader]) redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
      this.subscriber.on('message', (channel: string, message: string) => {
        const chunk = JSON.parse(message) as BuildLogChunk;
        for (const listener of this.listeners.get(channel) ?? []) listener(chunk);
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
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await subscriber.subscribe(channel);
    }
    set.add(listener);
    // Subscribed first, read the list second: a chunk published in between is in one or both, sent once.
    const kept = (await reader.lrange(buildLogList(this.config.QUEUE_PREFIX, deploymentId), 0, -1)).map((m) => JSON.parse(m) as BuildLogChunk);
    const newest = Math.max(0, ...kept.map((c) => c.attempt));
    for (const chunk of kept) if (chunk.attempt === newest) deliver(chunk);
    for (const chunk of replaying) deliver(chunk);
    replaying = null;
    return async () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        await subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  async onModuleDestroy(): Promise<void> {
    this.subscriber?.disconnect();
    this.reader?.disconnect();
  }
}
