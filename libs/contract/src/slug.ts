/** Slugs name an application's address (`{slug}.localhost:8080`) and its `{auth_url}`. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Names that would shadow platform hosts or paths. */
export const RESERVED_SLUGS = new Set([
  'api',
  'www',
  'admin',
  'dashboard',
  'auth',
  'app',
  'apps',
  'edge',
  'gateway',
  'static',
  'assets',
  'health',
  'status',
  'mail',
  'localhost',
]);

/** "My Shop!" → "my-shop". Empty or reserved results get a fallback the caller can suffix. */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/g, '');
  if (!base) return 'my-app';
  return RESERVED_SLUGS.has(base) ? `${base}-app` : base;
}

export function isValidSlug(slug: string): boolean {
  return SLUG_PATTERN.test(slug) && !RESERVED_SLUGS.has(slug);
}

/** A preview's name: one DNS label part, no `--` (it separates application and preview in `{slug}--{name}`). */
export const PREVIEW_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

export function isPreviewName(name: string): boolean {
  return PREVIEW_NAME_PATTERN.test(name) && !name.includes('--');
}
