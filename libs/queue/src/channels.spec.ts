import { TENANT_CHANGED_CHANNEL, routesChannel, sessionCacheChannel, sessionCacheReplicaChannel } from './index.js';

describe('channel catalogue', () => {
  it('names the routes channel', () => {
    expect(routesChannel('slipway')).toBe('slipway:routes');
  });

  it('keeps the names every running replica subscribes to', () => {
    expect(TENANT_CHANGED_CHANNEL).toBe('slipway:auth:tenant-changed');
    expect(sessionCacheChannel('slipway:auth:')).toBe('slipway:auth:session-cache:invalidate');
    expect(sessionCacheReplicaChannel('slipway:auth:', 'r1')).toBe('slipway:auth:session-cache:replica:r1');
  });
});
