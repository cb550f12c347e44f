export * from './envelope.js';
export * from './tokens.js';
