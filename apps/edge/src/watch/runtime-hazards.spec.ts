import { Redactor } from '@slipway/contract';
import { applicationOfUpstream } from './nginx-status-feed.js';
import { runtimeHazards } from './runtime-hazards.js';

const SECRET = 'sk_live_abcdef123456';
const redactor = new Redactor([{ name: 'PAYMENT_KEY', value: SECRET }]);

describe('runtimeHazards', () => {
  it('gives one hazard per kind with its count and a redacted, plain excerpt', () => {
    const hazards = runtimeHazards(
      {
        crashes: 2,
        restarts: 2,
        lastExit: '1',
        crashExcerpt: `Error: bad key ${SECRET}\n\u001b[31mred\u001b[0m`,
        errorLines: 4,
        errorExcerpt: [`key=${SECRET}`, 'x'],
      },
      { count: 3, samples: new Map([[`GET /pay/${SECRET} → 500`, 3]]) },
      redactor,
      60,
    );
    expect(hazards.map((h) => [h.code, h['count']])).toEqual([
      ['runtime_crashed', 2],
      ['runtime_5xx', 3],
      ['runtime_errors', 4],
    ]);
    const text = JSON.stringify(hazards);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('\u001b');
    expect(hazards[0]!.detail).toBe('Error: bad key [redacted:PAYMENT_KEY]\nred');
    expect(hazards[1]!.detail).toBe('GET /pay/[redacted:PAYMENT_KEY] → 500 (3×)');
  });

  it('gives none for a quiet release (or a runtime that does not report)', () => {
    expect(
      runtimeHazards(
        { crashes: 0, restarts: 0, lastExit: null, crashExcerpt: '', errorLines: 0, errorExcerpt: [] },
        { count: 0, samples: new Map() },
        redactor,
        60,
      ),
    ).toEqual([]);
    expect(runtimeHazards(undefined, undefined, redactor, 60)).toEqual([]);
  });
});

describe('applicationOfUpstream', () => {
  it('reads the application id from nginx upstream names of either slot, and nothing else', () => {
    expect(applicationOfUpstream('app_0123456789abcdef0123456789abcdef')).toBe('01234567-89ab-cdef-0123-456789abcdef');
    expect(applicationOfUpstream('app_0123456789abcdef0123456789abcdef_b')).toBe('01234567-89ab-cdef-0123-456789abcdef');
    expect(applicationOfUpstream('slipway_edge')).toBeUndefined();
    expect(applicationOfUpstream('-')).toBeUndefined();
  });
});
