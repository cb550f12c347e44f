export * from './driver.js';
export * from './handoff.js';
export * from './local-driver.js';
export * from './release-extractor.js';
export * from './release-switch.js';
export * from './tree-links.js';
export * from './kubernetes/kubernetes-driver.js';
export * from './kubernetes/manifests.js';
