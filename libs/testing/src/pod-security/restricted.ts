import { allContainers, type ContainerShape, type HandlerShape, type PodTemplateShape, type SecurityContextShape } from './pod-shape.js';

/**
 * The Kubernetes Pod Security Standard `restricted` (which includes `baseline`), rule by rule as
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/ lists it for Linux pods
 * at version `latest` (v1.35). Each problem names the rule the way the page does, then where.
 */

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const RESTRICTED_CAPABILITIES = new Set(['NET_BIND_SERVICE']);
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const APPARMOR_TYPES = new Set(['RuntimeDefault', 'Localhost']);
const SECCOMP_TYPES = new Set(['RuntimeDefault', 'Localhost']);
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';

type Report = (rule: string, where: string, what: string) => void;

function checkContext(context: SecurityContextShape, where: string, report: Report): void {
  if (context.windowsOptions?.hostProcess === true) report('HostProcess', where, 'windowsOptions.hostProcess must not be true');
  const appArmor = context.appArmorProfile?.type;
  if (appArmor !== undefined && !APPARMOR_TYPES.has(appArmor)) report('AppArmor', where, `appArmorProfile.type ${appArmor} is not RuntimeDefault or Localhost`);
  const seLinux = context.seLinuxOptions;
  if (seLinux?.type !== undefined && !SELINUX_TYPES.has(seLinux.type)) report('SELinux', where, `seLinuxOptions.type ${seLinux.type} is not allowed`);
  if (seLinux?.user) report('SELinux', where, 'seLinuxOptions.user must not be set');
  if (seLinux?.role) report('SELinux', where, 'seLinuxOptions.role must not be set');
  const seccomp = context.seccompProfile?.type;
  if (seccomp !== undefined && !SECCOMP_TYPES.has(seccomp)) report('Seccomp', where, `seccompProfile.type ${seccomp} is not RuntimeDefault or Localhost`);
  if (context.runAsUser === 0) report('Running as Non-root user', where, 'runAsUser must not be 0');
}

function checkHandlers(container: ContainerShape, where: string, report: Report): void {
  const handlers: [string, HandlerShape | undefined][] = [
    ['livenessProbe', container.livenessProbe],
    ['readinessProbe', container.readinessProbe],
    ['startupProbe', container.startupProbe],
    ['lifecycle.postStart', container.lifecycle?.postStart],
    ['lifecycle.preStop', container.lifecycle?.preStop],
  ];
  for (const [name, handler] of handlers) {
    if (handler?.httpGet?.host) report('Host Probes / Lifecycle Hooks', where, `${name}.httpGet.host must not be set`);
    if (handler?.tcpSocket?.host) report('Host Probes / Lifecycle Hooks', where, `${name}.tcpSocket.host must not be set`);
  }
}

function checkContainer(container: ContainerShape, pod: SecurityContextShape, report: Report): void {
  const where = `container ${container.name}`;
  const context = container.securityContext ?? {};
  checkContext(context, where, report);
  if (context.privileged === true) report('Privileged Containers', where, 'privileged must not be true');
  if ((context.procMount ?? 'Default') !== 'Default') report('/proc Mount Type', where, `procMount ${context.procMount} is not Default`);
  for (const port of container.ports ?? []) {
    if (port.hostPort) report('Host Ports', where, `hostPort ${port.hostPort} must not be set`);
  }
  checkHandlers(container, where, report);
  const added = context.capabilities?.add ?? [];
  for (const cap of added.filter((c) => !BASELINE_CAPABILITIES.has(c))) report('Capabilities (baseline)', where, `must not add ${cap}`);
  for (const cap of added.filter((c) => BASELINE_CAPABILITIES.has(c) && !RESTRICTED_CAPABILITIES.has(c))) report('Capabilities', where, `must not add ${cap}`);
  if (!(context.capabilities?.drop ?? []).includes('ALL')) report('Capabilities', where, 'capabilities.drop must include ALL');
  if (context.allowPrivilegeEscalation !== false) report('Privilege Escalation', where, 'allowPrivilegeEscalation must be false');
  if (context.runAsNonRoot === false) report('Running as Non-root', where, 'runAsNonRoot must not be false');
  if (context.runAsNonRoot !== true && pod.runAsNonRoot !== true) report('Running as Non-root', where, 'runAsNonRoot must be true (here or on the pod)');
  if (context.seccompProfile?.type === undefined && pod.seccompProfile?.type === undefined) {
    report('Seccomp', where, 'seccompProfile.type must be RuntimeDefault or Localhost (here or on the pod)');
  }
}

/** Every violation of the `restricted` Pod Security Standard in a pod template; [] when it complies. */
export function restrictedProblems(template: PodTemplateShape): string[] {
  const problems: string[] = [];
  const report: Report = (rule, where, what) => problems.push(`${where}: ${rule}: ${what}`);
  const pod = template.spec;
  const podContext = pod.securityContext ?? {};
  checkContext(podContext, 'pod', report);
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (pod[host] === true) report('Host Namespaces', 'pod', `${host} must not be true`);
  }
  for (const sysctl of podContext.sysctls ?? []) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) report('Sysctls', 'pod', `sysctl ${sysctl.name} is not in the safe set`);
  }
  for (const [key, value] of Object.entries(template.metadata?.annotations ?? {})) {
    if (key.startsWith(APPARMOR_ANNOTATION) && value !== 'runtime/default' && !value.startsWith('localhost/')) {
      report('AppArmor', 'pod', `annotation ${key} is ${value}`);
    }
  }
  for (const volume of pod.volumes ?? []) {
    if (volume['hostPath'] !== undefined) report('HostPath Volumes', 'pod', `volume ${volume.name} must not be a hostPath`);
    const sources = Object.keys(volume).filter((k) => k !== 'name');
    for (const source of sources.filter((s) => !RESTRICTED_VOLUME_SOURCES.has(s))) {
      report('Volume Types', 'pod', `volume ${volume.name} is of type ${source}`);
    }
  }
  for (const container of allContainers(pod)) checkContainer(container, podContext, report);
  return problems;
}
