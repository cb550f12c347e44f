export * from './analyze.js';
export * from './detect-spec.js';
export * from './node-version.js';
export * from './output-findings.js';
export * from './read-project.js';
export * from './secret-patterns.js';
export * from './source-findings.js';
export * from './types.js';
