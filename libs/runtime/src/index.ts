export * from './handoff.js';
