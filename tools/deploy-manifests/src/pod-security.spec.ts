import { podSpecOf, podTemplateOf } from './pod-security.js';

describe('podTemplateOf', () => {
  it('finds the pod template of each workload kind', () => {
    const template = { metadata: { annotations: { a: 'b' } }, spec: { containers: [] } };
    const meta = { name: 'x' };
    expect(podTemplateOf({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec: { template } })).toBe(template);
    expect(podTemplateOf({ apiVersion: 'batch/v1', kind: 'Job', metadata: meta, spec: { template } })).toBe(template);
    expect(podSpecOf({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta, spec: { jobTemplate: { spec: { template } } } })).toBe(template.spec);
    expect(podTemplateOf({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations: { a: 'b' } }, spec: template.spec })).toEqual({
      metadata: { name: 'p', annotations: { a: 'b' } },
      spec: template.spec,
    });
    expect(podSpecOf({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec: {} })).toBeUndefined();
  });
});
