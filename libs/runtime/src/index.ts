export * from './driver.js';
export * from './local-driver.js';
export * from './release-records.js';
export * from './logs/log-budget.js';
export * from './logs/log-limits.js';
export * from './logs/log-ring.js';
export * from './logs/release-log.js';
export * from './logs/log-lines.js';
export * from './release-extractor.js';
export * from './safe-extraction.js';
export * from './release-go-live.js';
export * from './release-switch.js';
export * from './tree-links.js';
export * from './watch/release-watch.js';
// Types only: the driver itself (and @kubernetes/client-node) loads when chosen (from-environment.ts).
export type { KubernetesDriver, KubernetesDriverOptions } from './kubernetes/kubernetes-driver.js';
export * from './kubernetes/from-environment.js';
export * from './kubernetes/manifests.js';
export * from './kubernetes/build-job.js';
