export * from './analyze.js';
export * from './detect-spec.js';
export * from './output-findings.js';
export * from './project-facts.js';
export * from './read-project.js';
export * from './secret-patterns.js';
export * from './source-findings.js';
export * from './types.js';
