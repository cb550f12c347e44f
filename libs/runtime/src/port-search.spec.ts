import { PortSearch, SETTLE_MS, portFinding, portInUse, unansweredMessage } from './port-search.js';

describe('where a starting release is routed', () => {
  it('PORT whenever it listens there; else its one other port; else nothing', () => {
    expect(portFinding([3000, 4123], 4123)).toEqual({ kind: 'env' });
    expect(portFinding([3000], 4123)).toEqual({ kind: 'own', port: 3000 });
    expect(portFinding([3000, 3001], 4123)).toEqual({ kind: 'several', ports: [3000, 3001] });
    expect(portFinding([], 4123)).toEqual({ kind: 'none' });
  });

  it('routes to PORT at once, and to another port only once it stayed the only one for SETTLE_MS', () => {
    const search = new PortSearch(4123);
    expect(search.next([3000], 0)).toBeUndefined();
    expect(search.next([3000], SETTLE_MS - 1)).toBeUndefined();
    expect(search.next([3000], SETTLE_MS)).toBe(3000);
    // A side port first, PORT a moment later: PORT.
    const side = new PortSearch(4123);
    expect(side.next([9229], 0)).toBeUndefined();
    expect(side.next([9229, 4123], 100)).toBe(4123);
    // Another port, or a second one, starts the wait again.
    const moving = new PortSearch(4123);
    moving.next([3000], 0);
    expect(moving.next([3000, 3001], SETTLE_MS)).toBeUndefined();
    expect(moving.next([3001], SETTLE_MS + 1)).toBeUndefined();
    expect(moving.next([3001], 2 * SETTLE_MS + 1)).toBe(3001);
    expect(moving.last).toEqual({ kind: 'own', port: 3001 });
  });

  it('reads the port a Node app could not listen on from its output', () => {
    expect(portInUse('Error: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle')).toBe(3000);
    expect(portInUse('Error: listen EADDRINUSE: address already in use 127.0.0.1:8080')).toBe(8080);
    expect(portInUse('Error: listen EACCES: permission denied 0.0.0.0:80')).toBeUndefined();
    expect(portInUse('EADDRINUSE: address already in use :::99999')).toBeUndefined();
  });

  it('says what was tried and found when it never answered', () => {
    expect(unansweredMessage(4123, undefined, { kind: 'none' }, 30, 'in its sandbox')).toBe(
      'the release did not answer HTTP within 30 s: it was given PORT=4123, and no listening TCP port was found in its sandbox',
    );
    expect(unansweredMessage(4123, undefined, { kind: 'several', ports: [3000, 3001] }, 30, 'in its sandbox')).toBe(
      'the release did not answer HTTP on PORT 4123 within 30 s: it listens on 3000, 3001, none of them PORT, and the platform routes to a port other than PORT only when it is the only one',
    );
    expect(unansweredMessage(4123, 3000, { kind: 'own', port: 3000 }, 30, 'in its sandbox')).toBe(
      'the release listens on 3000, not on PORT (4123), and did not answer HTTP there within 30 s',
    );
    expect(unansweredMessage(4123, undefined, { kind: 'env' }, 30, 'in its sandbox')).toBe('the release did not answer HTTP on PORT 4123 within 30 s');
  });
});
