import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const K8S_DIR = fileURLToPath(new URL('../../../k8s/', import.meta.url));
