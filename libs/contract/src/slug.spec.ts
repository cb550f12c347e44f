import { isValidSlug, slugify } from './slug.js';

describe('slugify', () => {
  it.each([
    ['My Shop!', 'my-shop'],
    ['  Crème Brûlée  ', 'creme-brulee'],
    ['API', 'api-app'],
    ['!!!', 'my-app'],
    ['a'.repeat(80), 'a'.repeat(50)],
  ])('%s → %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
    expect(isValidSlug(slug)).toBe(true);
  });

  it('rejects slugs that are not DNS labels or are reserved', () => {
    for (const bad of ['', '-a', 'a-', 'A', 'a_b', 'api', 'x'.repeat(64)]) expect(isValidSlug(bad)).toBe(false);
  });
});
