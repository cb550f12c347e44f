export * from './driver.js';
export * from './handoff.js';
export * from './local-driver.js';
export * from './release-extractor.js';
export * from './release-switch.js';
export * from './tree-links.js';
// Types only: the driver itself (and @kubernetes/client-node) loads when chosen (from-environment.ts).
export type { KubernetesDriver, KubernetesDriverOptions } from './kubernetes/kubernetes-driver.js';
export * from './kubernetes/from-environment.js';
export * from './kubernetes/manifests.js';
export * from './kubernetes/build-job.js';
export * from './sandbox/app-users.js';
export * from './sandbox/cgroups.js';
export * from './sandbox/local-sandbox.js';
export * from './sandbox/sandbox-argv.js';
export * from './sandbox/sandbox-probe.js';
