/**
 * The live build output feed on a real Redis: whole lines only, redacted before they are
 * published (a secret split across two chunks of output, and one of several lines, never leave
 * the worker), kept in the capped list for a late follower.
 */
import { buildLogChannel, buildLogList, type BuildLogChunk } from '@slipway/messaging';
import { Redis } from 'ioredis';
import { BuildLogFeed } from './build-log-feed.js';
import { plainLogText } from './plain-log-text.js';
import { Redactor } from './redactor.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('BuildLogFeed', () => {
  const prefix = `test-build-log-${process.pid}-${Date.now()}`;
  let redis: Redis;
  let subscriber: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
    subscriber = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await redis.del(buildLogList(prefix, 'd1'));
    redis.disconnect();
    subscriber.disconnect();
  });

  it('publishes whole lines, redacted, and keeps them for a late follower', async () => {
    const redactor = new Redactor([
      { name: 'TOKEN', value: 'sk_live_abcdef123456' },
      { name: 'PEM', value: 'line-one-secret\nline-two-secret' },
    ]);
    const feed = new BuildLogFeed(redis, prefix, 'd1', 1, (text) => redactor.redact(plainLogText(text)));
    const received: BuildLogChunk[] = [];
    await subscriber.subscribe(buildLogChannel(prefix, 'd1').name);
    subscriber.on('message', (_c, m: string) => received.push(JSON.parse(m) as BuildLogChunk));
    const sink = feed.sink('build');
    sink(Buffer.from('compiling… token=sk_live_abc'));
    sink(Buffer.from('def123456 done\nkey:\nline-one-secret\n'));
    await feed.flush();
    // The second line of the value in a later batch: redacted on its own.
    sink(Buffer.from('line-two-secret\n\x1b[31mred\x1b[0m\n'));
    await feed.flush();
    await new Promise((r) => setTimeout(r, 100));
    const text = received.map((c) => c.text).join('');
    expect(text).toBe('compiling… token=[redacted:TOKEN] done\nkey:\n[redacted:PEM]\n[redacted:PEM]\nred\n');
    expect(received.every((c) => c.step === 'build' && c.attempt === 1)).toBe(true);
    const kept = (await redis.lrange(buildLogList(prefix, 'd1'), 0, -1)).map((m) => (JSON.parse(m) as BuildLogChunk).text).join('');
    expect(kept).toBe(text);
    expect(await redis.ttl(buildLogList(prefix, 'd1'))).toBeGreaterThan(0);
  });
});
