export * from './app-users.js';
export * from './cgroups.js';
export * from './listening-ports.js';
export * from './local-sandbox.js';
export * from './process-tree.js';
export * from './sandbox-argv.js';
export * from './sandbox-probe.js';
export * from './sandbox-link.js';
