import { schemaProblems } from './schema-validation.js';

const deployment = (replicas: unknown) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'x', namespace: 'slipway' },
  spec: { replicas, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'x', image: 'x' }] } } },
});

describe('schemaProblems', () => {
  it('accepts a valid object', async () => {
    expect(await schemaProblems(deployment(2))).toEqual([]);
  });

  it('reports a field of the wrong type', async () => {
    expect(await schemaProblems(deployment('three'))).toEqual([expect.stringContaining('replicas must be integer')]);
  });

  it('reports kinds it has no schema for instead of passing them', async () => {
    expect(await schemaProblems({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } })).toEqual(['no schema for apps/v1 Deploymnet']);
    expect(await schemaProblems({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'x' } })).toEqual(['no schema for apiVersion example.com/v1']);
  });

  it('validates KEDA objects against the KEDA schema', async () => {
    const scaled = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'x' },
      spec: { scaleTargetRef: { name: 'w' }, triggers: [{ type: 'redis', metadata: {} }] },
    };
    expect(await schemaProblems(scaled)).toEqual([]);
    expect(await schemaProblems({ ...scaled, spec: { triggers: [] } })).not.toEqual([]);
  });
});
