import { hardeningProblems, podSecurityProblems } from './hardening.js';
import type { PodTemplateShape } from './pod-shape.js';
import { restrictedProblems } from './restricted.js';

const compliant = (): PodTemplateShape => ({
  metadata: { annotations: {} },
  spec: {
    automountServiceAccountToken: false,
    securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
    initContainers: [
      {
        name: 'init',
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '1', memory: '64Mi' } },
        volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      },
    ],
    containers: [
      {
        name: 'app',
        ports: [{ containerPort: 8080 }],
        readinessProbe: { httpGet: {} },
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '1', memory: '64Mi' } },
        volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      },
    ],
    volumes: [
      { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
      { name: 'config', configMap: { name: 'c' } },
    ],
  },
});

type Mutation = (t: PodTemplateShape) => void;
const app = (t: PodTemplateShape) => t.spec.containers[0]!;

/** One breach per rule of the restricted profile (baseline included), and the rule it must name. */
const RESTRICTED_RULES: [string, Mutation][] = [
  ['HostProcess', (t) => (t.spec.securityContext!.windowsOptions = { hostProcess: true })],
  ['Host Namespaces', (t) => (t.spec.hostNetwork = true)],
  ['Host Namespaces', (t) => (t.spec.hostPID = true)],
  ['Host Namespaces', (t) => (t.spec.hostIPC = true)],
  ['Privileged Containers', (t) => (app(t).securityContext!.privileged = true)],
  ['Capabilities (baseline)', (t) => (app(t).securityContext!.capabilities!.add = ['SYS_ADMIN'])],
  ['Capabilities', (t) => (app(t).securityContext!.capabilities!.add = ['CHOWN'])],
  ['Capabilities', (t) => (app(t).securityContext!.capabilities!.drop = ['NET_RAW'])],
  ['HostPath Volumes', (t) => t.spec.volumes!.push({ name: 'host', hostPath: { path: '/' } })],
  ['Host Ports', (t) => (app(t).ports = [{ containerPort: 8080, hostPort: 8080 }])],
  ['Host Probes / Lifecycle Hooks', (t) => (app(t).readinessProbe = { httpGet: { host: '169.254.169.254' } })],
  ['Host Probes / Lifecycle Hooks', (t) => (app(t).lifecycle = { preStop: { tcpSocket: { host: '10.0.0.1' } } })],
  ['AppArmor', (t) => (app(t).securityContext!.appArmorProfile = { type: 'Unconfined' })],
  ['AppArmor', (t) => (t.metadata!.annotations!['container.apparmor.security.beta.kubernetes.io/app'] = 'unconfined')],
  ['SELinux', (t) => (t.spec.securityContext!.seLinuxOptions = { type: 'spc_t' })],
  ['SELinux', (t) => (app(t).securityContext!.seLinuxOptions = { user: 'system_u' })],
  ['/proc Mount Type', (t) => (app(t).securityContext!.procMount = 'Unmasked')],
  ['Seccomp', (t) => (app(t).securityContext!.seccompProfile = { type: 'Unconfined' })],
  ['Seccomp', (t) => delete t.spec.securityContext!.seccompProfile],
  ['Sysctls', (t) => (t.spec.securityContext!.sysctls = [{ name: 'kernel.msgmax', value: '1' }])],
  ['Volume Types', (t) => t.spec.volumes!.push({ name: 'nfs', nfs: { server: 'x', path: '/' } })],
  ['Privilege Escalation', (t) => delete app(t).securityContext!.allowPrivilegeEscalation],
  ['Running as Non-root', (t) => delete t.spec.securityContext!.runAsNonRoot],
  ['Running as Non-root', (t) => (app(t).securityContext!.runAsNonRoot = false)],
  ['Running as Non-root user', (t) => (app(t).securityContext!.runAsUser = 0)],
  ['Running as Non-root user', (t) => (t.spec.securityContext!.runAsUser = 0)],
  ['Privilege Escalation', (t) => (t.spec.ephemeralContainers = [{ name: 'debug', securityContext: { capabilities: { drop: ['ALL'] } } }])],
];

const HARDENING_RULES: [string, Mutation][] = [
  ['pod: runAsUser must be set to a non-zero id', (t) => delete t.spec.securityContext!.runAsUser],
  ['pod: runAsGroup must be set to a non-zero id', (t) => (t.spec.securityContext!.runAsGroup = 0)],
  ['pod: automountServiceAccountToken must be false', (t) => delete t.spec.automountServiceAccountToken],
  ['pod: emptyDir tmp must have a sizeLimit', (t) => (t.spec.volumes![0]!.emptyDir = {})],
  ['container init: readOnlyRootFilesystem must be true', (t) => (t.spec.initContainers![0]!.securityContext!.readOnlyRootFilesystem = false)],
  ['container app: resources.limits.memory must be set', (t) => delete app(t).resources!.limits!['memory']],
  ['container app: resources.limits.cpu must be set', (t) => delete app(t).resources!.limits!['cpu']],
  ['container app: /tmp must be an emptyDir mount (the root filesystem is read-only)', (t) => (app(t).volumeMounts = [])],
];

describe('restrictedProblems', () => {
  it('accepts a restricted pod, with the seccomp profile and runAsNonRoot on the containers instead of the pod too', () => {
    expect(restrictedProblems(compliant())).toEqual([]);
    const perContainer = compliant();
    delete perContainer.spec.securityContext;
    for (const c of [...perContainer.spec.containers, ...perContainer.spec.initContainers!]) {
      Object.assign(c.securityContext!, { runAsNonRoot: true, seccompProfile: { type: 'Localhost' } });
    }
    expect(restrictedProblems(perContainer)).toEqual([]);
  });

  it.each(RESTRICTED_RULES)('refuses a breach of "%s"', (rule, mutate) => {
    const template = compliant();
    mutate(template);
    const problems = restrictedProblems(template);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.map((p) => p.split(': ')[1])).toContain(rule);
  });
});

describe('hardeningProblems', () => {
  it('accepts a hardened pod, and a token only when allowed', () => {
    expect(hardeningProblems(compliant())).toEqual([]);
    const withToken = compliant();
    withToken.spec.automountServiceAccountToken = true;
    expect(hardeningProblems(withToken, { allowServiceAccountToken: true })).toEqual([]);
  });

  it.each(HARDENING_RULES)('reports "%s"', (problem, mutate) => {
    const template = compliant();
    mutate(template);
    expect(hardeningProblems(template)).toEqual([problem]);
  });

  it('podSecurityProblems reports both kinds', () => {
    const template = compliant();
    template.spec.hostNetwork = true;
    delete template.spec.automountServiceAccountToken;
    expect(podSecurityProblems(template)).toEqual(['pod: Host Namespaces: hostNetwork must not be true', 'pod: automountServiceAccountToken must be false']);
  });
});
