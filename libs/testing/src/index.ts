export * from './process.js';
export * from './redis.js';
export * from './test-database.js';
export * from './service.js';
