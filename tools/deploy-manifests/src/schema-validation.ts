import type { K8sObject } from './manifest.js';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** Where the JSON-schema-backed model of each apiVersion lives (core API, KEDA CRDs). */
function modelModule(apiVersion: string): string {
  if (apiVersion.startsWith('keda.sh/')) return `@kubernetes-models/keda/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/**
 * Validates an object against the Kubernetes (or KEDA) JSON schema of its apiVersion and kind.
 * Returns the problems found; an unknown apiVersion/kind is itself a problem.
 */
export async function schemaProblems(object: K8sObject): Promise<string[]> {
  let models: Record<string, unknown>;
  try {
    models = (await import(modelModule(object.apiVersion))) as Record<string, unknown>;
  } catch {
    return [`no schema for apiVersion ${object.apiVersion}`];
  }
  const Model = models[object.kind] as ModelClass | undefined;
  if (typeof Model !== 'function') return [`no schema for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(forSchema(object)).validate();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

/**
 * kustomize wraps long base64 Secret values at 70 columns. The API server decodes them with
 * Go's base64 decoder, which skips line breaks, so they are valid; the schema's strict "byte"
 * format is not that lenient, hence the breaks are removed before validating.
 */
function forSchema(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object['data']) return object;
  const data = Object.fromEntries(Object.entries(object['data'] as Record<string, string>).map(([k, v]) => [k, v.replace(/[\r\n]/g, '')]));
  return { ...object, data };
}
