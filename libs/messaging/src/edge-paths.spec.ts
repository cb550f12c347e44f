import { randomBytes } from 'node:crypto';
import { RELEASE_START_PATH, RELEASE_START_PATTERN, edgeInternalToken, isEdgeInternalToken } from './edge-paths.js';

describe('the edge internal API: paths and tokens', () => {
  const key = randomBytes(32).toString('base64');

  it('derives a stable token from the master key, different per key', () => {
    expect(edgeInternalToken(key)).toBe(edgeInternalToken(key));
    expect(edgeInternalToken(key)).not.toBe(edgeInternalToken(randomBytes(32).toString('base64')));
    expect(edgeInternalToken(key)).not.toContain(key);
  });

  it('accepts only the exact bearer header', () => {
    expect(isEdgeInternalToken(key, `Bearer ${edgeInternalToken(key)}`)).toBe(true);
    expect(isEdgeInternalToken(key, edgeInternalToken(key))).toBe(false);
    expect(isEdgeInternalToken(key, undefined)).toBe(false);
    expect(isEdgeInternalToken(key, `Bearer ${edgeInternalToken(key)}x`)).toBe(false);
  });

  it('names the start path', () => {
    const id = '0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90';
    expect(RELEASE_START_PATTERN.exec(RELEASE_START_PATH(id))?.[1]).toBe(id);
  });
});
