import type { K8sObject } from './manifest.js';

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}
interface Container {
  name: string;
  securityContext?: SecurityContext;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
}
export interface PodSpec {
  securityContext?: SecurityContext;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: unknown; hostPath?: unknown }[];
  [field: string]: unknown;
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

/** The pod template of a workload object (CronJob included), or undefined for other kinds. */
export function podSpecOf(object: K8sObject): PodSpec | undefined {
  const spec = object['spec'] as Record<string, any> | undefined;
  if (WORKLOAD_KINDS.has(object.kind)) return spec?.['template']?.spec as PodSpec;
  if (object.kind === 'CronJob') return spec?.['jobTemplate']?.spec?.template?.spec as PodSpec;
  if (object.kind === 'Pod') return spec as PodSpec;
  return undefined;
}

/**
 * What the `restricted` Pod Security Standard and our own rules require of every pod template:
 * non-root, no privilege escalation, all capabilities dropped, read-only root filesystem with a
 * writable emptyDir at /tmp, seccomp RuntimeDefault, no host namespaces or host paths, and
 * requests and limits on every container. Returns one line per problem.
 */
export function podSecurityProblems(pod: PodSpec): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (podContext.runAsNonRoot !== true) problems.push('pod: securityContext.runAsNonRoot must be true');
  if (podContext.runAsUser === 0) problems.push('pod: runAsUser must not be 0');
  if (podContext.seccompProfile?.type !== 'RuntimeDefault') problems.push('pod: seccompProfile.type must be RuntimeDefault');
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (pod[host]) problems.push(`pod: ${host} must not be set`);
  }
  const emptyDirs = new Set((pod.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name));
  for (const volume of pod.volumes ?? []) {
    if (volume.hostPath !== undefined) problems.push(`pod: volume ${volume.name} must not be a hostPath`);
  }
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    const where = `container ${container.name}`;
    const context = container.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if (context.privileged === true) problems.push(`${where}: must not be privileged`);
    if (!(context.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where}: capabilities.drop must include ALL`);
    if ((context.capabilities?.add ?? []).length > 0) problems.push(`${where}: must not add capabilities`);
    if (context.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
    if (context.runAsNonRoot === false || context.runAsUser === 0) problems.push(`${where}: must not run as root`);
    if (context.seccompProfile && context.seccompProfile.type !== 'RuntimeDefault') {
      problems.push(`${where}: seccompProfile.type must be RuntimeDefault`);
    }
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
