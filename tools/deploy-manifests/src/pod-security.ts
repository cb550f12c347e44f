import type { PodSpecShape, PodTemplateShape } from '@slipway/testing';
import type { K8sObject } from './manifest.js';

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

/**
 * The pod template of a workload object (CronJob included; a Pod is its own template), or
 * undefined for other kinds. The checks themselves (`restricted` and Slipway's own rules) live in
 * `@slipway/testing`, shared with the runtime driver's tests.
 */
export function podTemplateOf(object: K8sObject): PodTemplateShape | undefined {
  const spec = object['spec'] as Record<string, any> | undefined;
  if (WORKLOAD_KINDS.has(object.kind)) return spec?.['template'] as PodTemplateShape;
  if (object.kind === 'CronJob') return spec?.['jobTemplate']?.spec?.template as PodTemplateShape;
  if (object.kind === 'Pod') return { metadata: object.metadata, spec: spec as PodSpecShape };
  return undefined;
}

export function podSpecOf(object: K8sObject): PodSpecShape | undefined {
  return podTemplateOf(object)?.spec;
}
