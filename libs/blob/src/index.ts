export * from './blob-store.js';
export * from './create-blob-store.js';
export * from './local-blob-store.js';
export * from './source-format.js';
