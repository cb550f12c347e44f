export * from './node-toolchains.js';
export * from './node-versions.js';
export * from './npm-registry.js';
export * from './package-managers.js';
export * from './toolchain-error.js';
