import { podSecurityProblems, podSpecOf, type PodSpec } from './pod-security.js';

const compliant = (): PodSpec => ({
  securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [
    {
      name: 'app',
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '1', memory: '64Mi' } },
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
    },
  ],
  volumes: [{ name: 'tmp', emptyDir: {} }],
});

describe('podSecurityProblems', () => {
  it('accepts a restricted pod', () => {
    expect(podSecurityProblems(compliant())).toEqual([]);
  });

  it('names every rule a pod breaks', () => {
    const pod = compliant();
    pod.securityContext = { runAsUser: 0 };
    pod.hostNetwork = true;
    pod.volumes = [{ name: 'tmp', hostPath: { path: '/tmp' } }];
    pod.initContainers = [{ name: 'init', securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN'] } } }];
    expect(podSecurityProblems(pod)).toEqual([
      'pod: securityContext.runAsNonRoot must be true',
      'pod: runAsUser must not be 0',
      'pod: seccompProfile.type must be RuntimeDefault',
      'pod: hostNetwork must not be set',
      'pod: volume tmp must not be a hostPath',
      'container init: allowPrivilegeEscalation must be false',
      'container init: must not be privileged',
      'container init: capabilities.drop must include ALL',
      'container init: must not add capabilities',
      'container init: readOnlyRootFilesystem must be true',
      'container init: resources.requests.cpu must be set',
      'container init: resources.requests.memory must be set',
      'container init: resources.limits.cpu must be set',
      'container init: resources.limits.memory must be set',
      'container init: /tmp must be an emptyDir mount (the root filesystem is read-only)',
      'container app: /tmp must be an emptyDir mount (the root filesystem is read-only)',
    ]);
  });

  it('finds the pod template of each workload kind', () => {
    const template = { spec: compliant() };
    const meta = { name: 'x' };
    expect(podSpecOf({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec: { template } })).toBe(template.spec);
    expect(podSpecOf({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta, spec: { jobTemplate: { spec: { template } } } })).toBe(template.spec);
    expect(podSpecOf({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec: {} })).toBeUndefined();
  });
});
