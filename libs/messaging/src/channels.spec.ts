import { buildLogChannel, buildLogList, channelName, routesChannel, sessionCacheChannel, sessionCacheReplicaChannel, tenantChangedChannel } from './index.js';

describe('channel catalogue', () => {
  it('names every channel by one rule: <prefix>:<parts>, a trailing colon of the prefix dropped', () => {
    expect(channelName('slipway', 'routes')).toBe('slipway:routes');
    expect(channelName('slipway:auth:', 'tenant-changed')).toBe('slipway:auth:tenant-changed');
    expect(channelName('slipway:auth::', 'a', 'b')).toBe('slipway:auth:a:b');
  });

  it('keeps the names every running replica subscribes to', () => {
    expect(routesChannel('slipway').name).toBe('slipway:routes');
    expect(tenantChangedChannel().name).toBe('slipway:auth:tenant-changed');
    expect(sessionCacheChannel('slipway:auth:').name).toBe('slipway:auth:session-cache:invalidate');
    expect(sessionCacheReplicaChannel('slipway:auth:', 'r1').name).toBe('slipway:auth:session-cache:replica:r1');
    expect(buildLogChannel('slipway', 'd1').name).toBe('slipway:build-log:d1');
    expect(buildLogList('slipway', 'd1')).toBe('slipway:build-log:d1:lines');
  });

  it('gives the same name whether the prefix ends in a colon or not', () => {
    expect(routesChannel('t:').name).toBe(routesChannel('t').name);
    expect(sessionCacheChannel('slipway:auth').name).toBe(sessionCacheChannel('slipway:auth:').name);
  });

  it('carries JSON both ways', () => {
    const routes = routesChannel('p');
    expect(routes.encode({ applicationId: 'a1' })).toBe('{"applicationId":"a1"}');
    expect(routes.decode(routes.encode({ all: true }))).toEqual({ all: true });
    const log = buildLogChannel('p', 'd1');
    const chunk = { attempt: 1, seq: 2, step: 'build', text: 'done\n' };
    expect(log.decode(log.encode(chunk))).toEqual(chunk);
    const cache = sessionCacheChannel('p:');
    const invalidate = { kind: 'invalidate' as const, replicaId: 'r1', messageId: 'm1', tenantId: 't1', userIds: ['u1', 'u2'] };
    expect(cache.decode(cache.encode(invalidate))).toEqual(invalidate);
    expect(cache.decode(cache.encode({ kind: 'beat', replicaId: 'r1', sentAt: 12.5 }))).toEqual({ kind: 'beat', replicaId: 'r1', sentAt: 12.5 });
    const ack = sessionCacheReplicaChannel('p:', 'r1');
    expect(ack.decode(ack.encode({ messageId: 'm1', replicaId: 'r2' }))).toEqual({ messageId: 'm1', replicaId: 'r2' });
  });

  it('refuses a message that is not the channel’s payload', () => {
    expect(() => routesChannel('p').decode('{"applicationId":3}')).toThrow(/not a message of channel p:routes/);
    expect(() => buildLogChannel('p', 'd1').decode('"text"')).toThrow(/not a message/);
    expect(() => sessionCacheChannel('p').decode('{"kind":"beat","replicaId":"r1"}')).toThrow(/not a message/);
    expect(() => sessionCacheChannel('p').decode('beat r1 12')).toThrow();
  });

  it('announces a tenant change as JSON and still reads the bare application id it used to carry', () => {
    const channel = tenantChangedChannel();
    expect(channel.encode({ applicationId: 'a1' })).toBe('{"applicationId":"a1"}');
    expect(channel.decode('{"applicationId":"a1"}')).toEqual({ applicationId: 'a1' });
    expect(channel.decode('a1')).toEqual({ applicationId: 'a1' });
    expect(() => channel.decode('{"slug":"x"}')).toThrow(/not a message/);
  });
});
