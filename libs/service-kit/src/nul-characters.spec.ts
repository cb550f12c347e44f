import { nulPath } from './nul-characters.js';

describe('nulPath: where a NUL (U+0000) is in a JSON value', () => {
  it('names the keys down to the string or key that holds one', () => {
    expect(nulPath({ name: 'a\u0000b' })).toEqual(['name']);
    expect(nulPath({ a: [{ b: 'ok' }, { c: '\u0000' }] })).toEqual(['a', '1', 'c']);
    expect(nulPath({ meta: { 'k\u0000': 1 } })).toEqual(['meta', 'k\\0']);
    expect(nulPath('\u0000')).toEqual([]);
  });

  it('finds none in clean values, whatever their shape', () => {
    for (const value of [null, undefined, 1, true, '', 'plain', { a: ['x', { b: 2 }] }, [], {}]) expect(nulPath(value)).toBeNull();
  });

  it('walks a value nested far deeper than the call stack allows', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nulPath(deep)).toHaveLength(200_000);
  });
});
