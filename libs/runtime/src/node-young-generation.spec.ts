import { nodeOptionsFor, youngGenerationFlag } from './node-young-generation.js';

const MiB = 2 ** 20;

describe("a Node app's young generation under its memory limit", () => {
  it('is the limit ÷ 128, between 1 and 16 MiB', () => {
    expect(youngGenerationFlag(512 * MiB, '24.22.3')).toBe('--max-semi-space-size=4');
    expect(youngGenerationFlag(256 * MiB, '22.1.0')).toBe('--max-semi-space-size=2');
    expect(youngGenerationFlag(64 * MiB, '20.0.0')).toBe('--max-semi-space-size=1');
    expect(youngGenerationFlag(8192 * MiB, '20.0.0')).toBe('--max-semi-space-size=16');
  });

  it('is left to Node with no limit, an unknown Node, or a Node that refuses the flag in NODE_OPTIONS', () => {
    expect(youngGenerationFlag(null, '24.0.0')).toBeNull();
    expect(youngGenerationFlag(0, '24.0.0')).toBeNull();
    expect(youngGenerationFlag(512 * MiB, undefined)).toBeNull();
    expect(youngGenerationFlag(512 * MiB, '18.12.0')).toBeNull();
    expect(youngGenerationFlag(512 * MiB, '19.0.0')).toBeNull();
    expect(youngGenerationFlag(512 * MiB, '16.20.2')).toBeNull();
    expect(youngGenerationFlag(512 * MiB, '18.13.0')).toBe('--max-semi-space-size=4');
    expect(youngGenerationFlag(512 * MiB, 'v19.5.0')).toBe('--max-semi-space-size=4');
  });

  it("goes before the project's own NODE_OPTIONS, and not at all when the project sets its own", () => {
    expect(nodeOptionsFor(undefined, 512 * MiB, '24.0.0')).toBe('--max-semi-space-size=4');
    expect(nodeOptionsFor('  ', 512 * MiB, '24.0.0')).toBe('--max-semi-space-size=4');
    expect(nodeOptionsFor('--enable-source-maps', 512 * MiB, '24.0.0')).toBe('--max-semi-space-size=4 --enable-source-maps');
    expect(nodeOptionsFor('--max-semi-space-size=32', 512 * MiB, '24.0.0')).toBe('--max-semi-space-size=32');
    expect(nodeOptionsFor('--inspect --max_semi_space_size=1', 512 * MiB, '24.0.0')).toBe('--inspect --max_semi_space_size=1');
    expect(nodeOptionsFor('--enable-source-maps', null, '24.0.0')).toBe('--enable-source-maps');
    expect(nodeOptionsFor(undefined, null, '24.0.0')).toBeUndefined();
  });
});
