export * from './s3-emulator.js';
