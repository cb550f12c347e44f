import { STATUS_TONE, formatBytes, formatDuration, formatMoment, formatWhen, isTerminal, localizeTimes } from './format.js';

describe('dashboard formatting', () => {
  it.each([
    [undefined, '—'],
    [-1, '—'],
    [12.4, '12 ms'],
    [1500, '1.5 s'],
    [42_000, '42 s'],
    [125_000, '2 min 5 s'],
  ])('formats %p ms as %p', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('formats sizes with binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(200 * 1024 * 1024)).toBe('200 MiB');
  });

  it('knows which statuses end polling', () => {
    expect(['queued', 'building', 'releasing', 'succeeded', 'failed'].filter((s) => isTerminal(s as never))).toEqual(['succeeded', 'failed']);
    expect(STATUS_TONE.failed).toBe('danger');
  });

  it('says when things happened in words, and dates anything older than a week', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(formatWhen(null, now)).toBe('never');
    expect(formatWhen('2026-11-22T09:59:50Z', now)).toBe('just now');
    expect(formatWhen('2026-11-22T09:57:00Z', now)).toBe('3 min ago');
    expect(formatWhen('2026-11-22T05:00:00Z', now)).toBe('5 h ago');
    expect(formatWhen('2026-11-20T10:00:00Z', now)).toBe('2 d ago');
    expect(formatWhen('2026-10-01T10:00:00Z', now)).toBe('2026-10-01');
  });

  it('says a moment in the reader’s time zone and language, the platform’s UTC times in its sentences too', () => {
    const utc = { locale: 'en-GB', timeZone: 'UTC' };
    expect(formatMoment('2026-11-28T09:30:27Z', utc)).toBe('28 Nov 2026, 09:30');
    expect(formatMoment('2026-11-28T09:30:27Z', { locale: 'en-GB', timeZone: 'Europe/Paris' })).toBe('28 Nov 2026, 10:30');
    expect(formatMoment('not a time', utc)).toBe('—');
    expect(
      localizeTimes(
        '2026-11-20T08:00:00.000Z is before the earliest point this database can be restored to (2026-11-27T08:15:20.123Z: the plan’s 1-day window).',
        utc,
      ),
    ).toBe('20 Nov 2026, 08:00 is before the earliest point this database can be restored to (27 Nov 2026, 08:15: the plan’s 1-day window).');
    expect(localizeTimes('no times here', utc)).toBe('no times here');
  });
});
