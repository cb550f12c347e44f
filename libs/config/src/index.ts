export { ConfigError, loadConfig } from './load-config.js';
export * from './fields.js';
export { z } from 'zod';
export * from './runtime-file.js';
export * from './service-entries.js';
