import { defaultMoment, fromLocalInput, isActive, isRestorable, momentBounds, momentProblem, toLocalInput } from './restore-window.js';

describe('the restore window', () => {
  const now = Date.parse('2026-11-28T10:00:30Z');
  const window = { earliest: '2026-11-27T08:15:20Z', latest: '2026-11-28T10:00:00Z' };
  const iso = (at: Date) => at.toISOString();

  it('writes and reads datetime-local values on the reader’s wall clock, to the minute', () => {
    const at = new Date(2026, 10, 28, 9, 5, 42);
    expect(toLocalInput(at)).toBe('2026-11-28T09:05');
    expect(fromLocalInput('2026-11-28T09:05')).toEqual(new Date(2026, 10, 28, 9, 5));
    expect(fromLocalInput('2026-11-28T09:05:07')).toEqual(new Date(2026, 10, 28, 9, 5, 7));
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('yesterday')).toBeNull();
  });

  it('bounds the input to whole minutes inside the window, since the input has no seconds', () => {
    const { min, max } = momentBounds(window, now);
    expect([iso(min), iso(max)]).toEqual(['2026-11-27T08:16:00.000Z', '2026-11-28T10:00:00.000Z']);
  });

  it('starts a few minutes back, or at the edge of a window younger than that', () => {
    expect(iso(defaultMoment(window, now))).toBe('2026-11-28T09:55:00.000Z');
    expect(iso(defaultMoment({ earliest: '2026-11-28T09:58:10Z', latest: '2026-11-28T10:00:00Z' }, now))).toBe('2026-11-28T09:59:00.000Z');
  });

  it('says why a moment cannot be restored to', () => {
    const format = (value: string) => value;
    expect(momentProblem(null, window, now, format)).toBe('Choose a date and a time.');
    expect(momentProblem(new Date(now + 60_000), window, now, format)).toMatch(/still to come/);
    expect(momentProblem(new Date('2026-11-27T08:15:00Z'), window, now, format)).toBe(
      'That is before the earliest moment you can restore to, 2026-11-27T08:16:00.000Z.',
    );
    expect(momentProblem(new Date('2026-11-28T09:00:00Z'), window, now, format)).toBeNull();
  });

  it('knows which backups can be restored to and which restores are still going', () => {
    expect(isRestorable('2026-11-28T00:00:00Z', window, now)).toBe(true);
    expect(isRestorable('2026-11-20T00:00:00Z', window, now)).toBe(false);
    expect(isRestorable('2026-11-28T00:00:00Z', null, now)).toBe(false);
    expect(isRestorable('2026-11-28T10:00:50Z', { ...window, latest: '2026-11-28T10:01:00Z' }, now)).toBe(true);
    expect(isRestorable('2026-11-28T10:01:10Z', { ...window, latest: '2026-11-28T10:01:00Z' }, now)).toBe(false);
    expect((['queued', 'running', 'succeeded', 'failed'] as const).filter(isActive)).toEqual(['queued', 'running']);
  });
});
