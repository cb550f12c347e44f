import { type PodTemplateShape } from './pod-shape.js';
import { restrictedProblems } from './restricted.js';

export interface HardeningOptions {
  /** Only the edge (the runtime driver) talks to the Kubernetes API; everything else gets no token. */
  allowServiceAccountToken?: boolean;
}

/**
 * Slipway's rules on top of `restricted`: an explicit non-root uid and gid on the pod (the image's
 * user is not trusted to be numeric or non-root), a read-only root filesystem with a writable,
 * size-bounded emptyDir at /tmp, a size limit on every emptyDir, CPU and memory requests and
 * limits on every container, and no service-account token unless asked for.
 */
export function hardeningProblems(template: PodTemplateShape, options: HardeningOptions = {}): string[] {
  const problems: string[] = [];
  const pod = template.spec;
  const podContext = pod.securityContext ?? {};
  for (const id of ['runAsUser', 'runAsGroup'] as const) {
    const value = podContext[id];
    if (typeof value !== 'number' || value <= 0) problems.push(`pod: ${id} must be set to a non-zero id`);
  }
  if (pod.automountServiceAccountToken !== false && !options.allowServiceAccountToken) {
    problems.push('pod: automountServiceAccountToken must be false');
  }
  const emptyDirs = new Map((pod.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => [v.name, v.emptyDir!]));
  for (const [name, emptyDir] of emptyDirs) {
    if (!emptyDir.sizeLimit) problems.push(`pod: emptyDir ${name} must have a sizeLimit`);
  }
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    const where = `container ${container.name}`;
    if (container.securityContext?.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
    for (const kind of ['requests', 'limits'] as const) {
      for (const resource of ['cpu', 'memory']) {
        if (!container.resources?.[kind]?.[resource]) problems.push(`${where}: resources.${kind}.${resource} must be set`);
      }
    }
    const tmp = (container.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
    if (!tmp || !emptyDirs.has(tmp.name)) problems.push(`${where}: /tmp must be an emptyDir mount (the root filesystem is read-only)`);
  }
  return problems;
}

/** `restricted` and Slipway's own rules together: what every pod Slipway creates must pass. */
export function podSecurityProblems(template: PodTemplateShape, options: HardeningOptions = {}): string[] {
  return [...restrictedProblems(template), ...hardeningProblems(template, options)];
}
