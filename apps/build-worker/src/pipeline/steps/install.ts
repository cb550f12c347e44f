import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PipelineStep } from '../deploy-context.js';

/**
 * The project's install command, in the sandbox; dependencies restored from (and saved to) the
 * application's dependency cache when the lockfile is unchanged and the install runs sandboxed.
 */
export const installStep: PipelineStep = {
  name: 'install',
  async run(context, log) {
    const { project, root, src, services } = context;
    const { applicationId, deploymentId } = context.attempt;
    const { cache, commands } = services;
    if (!project.commands.install) return 'skipped';
    const sandbox = await context.codeSandbox();
    await rm(join(src, 'node_modules'), { recursive: true, force: true });
    const owner = sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined;
    // Unsandboxed, the install runs as the worker's own user and could rewrite the cache: none is used.
    // The cache keeps the top level's node_modules only: a workspace (node_modules in each package too) or a project in a sub-folder uses none.
    if (project.rootDirectory && project.lockfile && cache.enabled)
      log(
        `dependencies are not cached for ${project.workspace ? 'a workspace (each package has node_modules of its own)' : `a project in a sub-folder (${project.rootDirectory})`}; the package manager's download cache still is`,
      );
    const key =
      project.lockfile && owner && cache.enabled && !project.rootDirectory
        ? await cache
            .keyFor(
              applicationId,
              src,
              project.lockfile,
              `${project.packageManager ?? 'npm'}@${project.packageManagerVersion ?? 'bundled'}`,
              project.nodeVersion ?? process.version,
            )
            .catch((error: Error) => {
              log(`dependencies are not cached: ${project.lockfile} cannot be read (${error.message.replaceAll(src, '.')})`);
              return null;
            })
        : null;
    if (key) {
      const restored = await cache.restore(key, src, owner);
      if (restored.hit) {
        log(`dependencies restored from the cache (lockfile ${project.lockfile} unchanged, ${restored.files} files verified in ${restored.ms} ms)`);
        return;
      }
      if (restored.reason) {
        log(restored.discarded ? `the cached dependencies were discarded: ${restored.reason}; installing afresh` : `${restored.reason}; installing`);
        services.logger.warn(`deployment ${deploymentId}: dependency cache of ${applicationId} not used: ${restored.reason}`);
      }
    }
    const downloads = await context.downloadCacheDir(owner);
    const node = context.toolchain;
    const pm = context.manager;
    await commands.exec(sandbox, project.commands.install, {
      root,
      src,
      env: commands.installEnv(sandbox, downloads, root, node, pm),
      cacheDir: downloads,
      toolchain: node,
      manager: pm,
      failure: 'install_failed',
      shutdown: context.shutdown,
      budget: context.budget,
      disk: context.disk,
      usage: context,
      log,
    });
    if (key) {
      const saved = await cache.save(key, src);
      log(saved.saved ? `dependencies cached (${saved.files} files, ${saved.bytes} bytes)` : `dependencies not cached: ${saved.reason}`);
    }
  },
};
