import { STATUS_TONE, formatBytes, formatDuration, isTerminal } from './format.js';

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
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(200 * 1024 * 1024)).toBe('200 MB');
  });

  it('knows which statuses end polling', () => {
    expect(['queued', 'building', 'releasing', 'succeeded', 'failed'].filter((s) => isTerminal(s as never))).toEqual(['succeeded', 'failed']);
    expect(STATUS_TONE.failed).toBe('danger');
  });
});
