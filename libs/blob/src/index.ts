export * from './blob-config.js';
export * from './blob-store.js';
export * from './create-blob-store.js';
export * from './local-blob-store.js';
export * from './s3-blob-store.js';
export * from './source-format.js';
