export * from './errors.js';
export * from './limits.js';
export * from './ports.js';
export * from './slug.js';
export * from './deploy.js';
export * from './static-release.js';
export * from './api-error.js';
export * from './api-views.js';
