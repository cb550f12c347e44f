/**
 * The parts of a pod the Pod Security checks read, loosely typed: manifests come from parsed
 * YAML or from `@kubernetes/client-node` objects, and a check must see what is there, typed or
 * not (a misspelt or unexpected field is exactly what it looks for).
 */
export interface SecurityContextShape {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  procMount?: string;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
  appArmorProfile?: { type?: string };
  seLinuxOptions?: { type?: string; user?: string; role?: string; level?: string };
  windowsOptions?: { hostProcess?: boolean };
  sysctls?: { name: string; value?: string }[];
}

export interface HandlerShape {
  httpGet?: { host?: string };
  tcpSocket?: { host?: string };
}

export interface ContainerShape {
  name: string;
  securityContext?: SecurityContextShape;
  ports?: { hostPort?: number; containerPort?: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
  livenessProbe?: HandlerShape;
  readinessProbe?: HandlerShape;
  startupProbe?: HandlerShape;
  lifecycle?: { postStart?: HandlerShape; preStop?: HandlerShape };
}

export interface VolumeShape {
  name: string;
  emptyDir?: { sizeLimit?: string; medium?: string };
  [source: string]: unknown;
}

export interface PodSpecShape {
  securityContext?: SecurityContextShape;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  hostUsers?: boolean;
  automountServiceAccountToken?: boolean;
  containers: ContainerShape[];
  initContainers?: ContainerShape[];
  ephemeralContainers?: ContainerShape[];
  volumes?: VolumeShape[];
}

/** A pod template (or a pod): AppArmor may still be set by annotation, so metadata counts too. */
export interface PodTemplateShape {
  metadata?: { annotations?: Record<string, string> };
  spec: PodSpecShape;
}

/** Reads any pod template, typed or parsed, as the shape the checks use. */
export function asPodTemplate(template: { metadata?: object; spec?: object }): PodTemplateShape {
  return template as unknown as PodTemplateShape;
}

export function allContainers(pod: PodSpecShape): ContainerShape[] {
  return [...(pod.initContainers ?? []), ...pod.containers, ...(pod.ephemeralContainers ?? [])];
}
