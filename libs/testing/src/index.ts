export * from './process.js';
export * from './redis.js';
export * from './test-database.js';
export * from './service.js';
export * from './deploy-harness.js';
export * from './health-suite.js';
