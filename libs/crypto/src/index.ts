export * from './envelope.js';
export * from './tokens.js';
export * from './sealed-stream.js';
