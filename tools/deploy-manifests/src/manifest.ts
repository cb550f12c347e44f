import { parseAllDocuments } from 'yaml';
import { kustomizeBuild } from './kubectl.js';

/** A rendered Kubernetes object, loosely typed: tests read the fields they check. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export function parseManifests(yamlText: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as K8sObject | null;
    if (value) objects.push(value);
  }
  return objects;
}

/** Renders a kustomization directory with real kustomize (kubectl's) and parses the result. */
export function renderKustomization(dir: string): K8sObject[] {
  return parseManifests(kustomizeBuild(dir));
}

export function findObject(objects: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

export function objectId(o: K8sObject): string {
  return `${o.kind} ${o.metadata.namespace ?? '(cluster)'}/${o.metadata.name}`;
}
