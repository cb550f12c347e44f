export * from './address-bucket.js';
export * from './all-exceptions.filter.js';
export * from './api.exception.js';
export * from './bootstrap.js';
export * from './dependencies.js';
export * from './dependency.probe.js';
export * from './health.module.js';
export * from './listen-fds.js';
