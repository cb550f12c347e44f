import { restoreTarget } from './db.command.js';

describe('slipway db restore --to', () => {
  const now = Date.parse('2026-11-28T10:00:00.000Z');
  it.each([
    ['90s', '2026-11-28T09:58:30.000Z'],
    ['15m', '2026-11-28T09:45:00.000Z'],
    ['2h', '2026-11-28T08:00:00.000Z'],
    ['1d', '2026-11-27T10:00:00.000Z'],
  ])('a duration back from now: %s → %s', (given, expected) => {
    expect(restoreTarget(given, now)).toBe(expected);
  });

  it.each(['2026-11-28T09:30:00Z', 'b4e14fde-f0b9-4559-82e6-5ee7a4134c88', '15 minutes'])(
    'anything else goes as given, for the platform to judge: %s',
    (given) => {
      expect(restoreTarget(given, now)).toBe(given);
    },
  );
});
