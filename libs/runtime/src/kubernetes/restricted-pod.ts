import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';

/**
 * What every container Slipway creates for tenant code carries: the `restricted` Pod Security
 * Standard (no privilege escalation, all capabilities dropped, non-root, RuntimeDefault
 * seccomp) and a read-only root filesystem (writable space is size-limited emptyDirs only).
 */
export const RESTRICTED_CONTAINER: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The pod-level half: an explicit non-zero uid and gid (never the image's choice, never the platform's 10001). */
export function restrictedPodContext(id: number): V1PodSecurityContext {
  if (!Number.isInteger(id) || id <= 0) throw new Error(`a tenant pod needs a non-zero uid, got ${id}`);
  return { runAsNonRoot: true, runAsUser: id, runAsGroup: id, fsGroup: id, seccompProfile: { type: 'RuntimeDefault' } };
}

/** Node's fetch, as a one-line script: downloads `$<urlVar>` to `<file>` (bearer `$<tokenVar>` when given). */
export function downloadScript(urlVar: string, file: string, tokenVar?: string): string {
  const headers = tokenVar ? `{headers:{authorization:'Bearer '+process.env.${tokenVar}}}` : '{}';
  return `fetch(process.env.${urlVar},${headers}).then(async r=>{if(!r.ok)throw new Error('download '+r.status);require('fs').writeFileSync('${file}',Buffer.from(await r.arrayBuffer()))})`;
}
