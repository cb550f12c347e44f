import { stat } from 'node:fs/promises';
import { buildOutputWarnings, parsePackageJson } from '@slipway/analyzer';
import type { PipelineStep } from '../deploy-context.js';
import { pruneCommand, readPackageJsonOf } from '../manager-commands.js';
import { hasNextStandalone, nextStandaloneBuildEnv } from '../next-standalone.js';
import { resolveOutputDir } from '../output-links.js';
import { StepFailure } from '../step-recorder.js';

/**
 * The project's build command, in the sandbox, with the application's kept build caches; then
 * a Node release's dev dependencies pruned (each manager's own prune), unless Next.js produced
 * standalone output.
 */
export const buildStep: PipelineStep = {
  name: 'build',
  async run(context, log) {
    const { project, root, src, services, app } = context;
    const { applicationId } = context.attempt;
    const { buildCaches, commands } = services;
    const node = context.toolchain;
    const pm = context.manager;
    // After the build, a Node release's dev dependencies go (each manager's own prune).
    const pkg = parsePackageJson(await readPackageJsonOf(src));
    const prune = pruneCommand(project, pkg, context.managerRequest);
    const standaloneEnv = project.commands.build ? nextStandaloneBuildEnv(project, pkg) : {};
    if (!project.commands.build && !prune.command) return 'skipped';
    const sandbox = await context.codeSandbox();
    if (project.commands.build) {
      // Kept caches only where the build runs sandboxed (as the build user, whose files they are).
      const keepCaches = sandbox.mode.kind === 'bwrap';
      if (keepCaches) {
        const owner = sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined;
        const restored = await buildCaches.restore(applicationId, src, owner);
        if (restored.length) log(`build caches restored: ${restored.join(', ')}`);
        // Next.js asks CI builds to "configure build caching" unless .next/cache exists: it is configured (kept per application).
        else if (project.framework === 'next') await buildCaches.prepare(src, '.next/cache', owner);
      }
      const output = await commands.exec(sandbox, project.commands.build, { root, src, env: { ...commands.buildEnv(sandbox, app.buildVariables, root, node, pm), ...standaloneEnv }, toolchain: node, manager: pm, failure: 'build_failed', shutdown: context.shutdown, budget: context.budget, disk: context.disk, usage: context, log });
      context.warnings.push(...buildOutputWarnings(context.recorder.redact(output)));
      // What the build must produce (a framework's server bundle, e.g. SvelteKit's build/), else what is served.
      const produced = project.buildOutput ?? project.outputDir;
      if (produced && produced !== '.' && !(await statOf(await resolveOutputDir(src, produced)))?.isDirectory()) {
        throw new StepFailure('output_missing', `the build finished but did not produce ${produced}/`);
      }
      if (keepCaches) {
        const { kept, notKept } = await buildCaches.keep(applicationId, src);
        if (kept.length) log(`build caches kept for the next build, not shipped: ${kept.join(', ')}`);
        if (notKept) log(`build caches not kept: ${notKept}`);
      }
    }
    if (standaloneEnv.NEXT_PRIVATE_STANDALONE && (await hasNextStandalone(src))) {
      context.standalone = true;
      log('Next.js standalone output: the release ships .next/standalone (only the traced dependencies), started with node server.js');
      return;
    }
    if (!prune.command) {
      log(`dev dependencies not pruned: ${prune.why}`);
      return;
    }
    const downloads = await context.downloadCacheDir(sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined);
    await commands.exec(sandbox, prune.command, { root, src, env: { ...commands.installEnv(sandbox, downloads, root, node, pm), NODE_ENV: 'production' }, cacheDir: downloads, toolchain: node, manager: pm, failure: 'build_failed', shutdown: context.shutdown, budget: context.budget, disk: context.disk, usage: context, log });
  },
};

function statOf(path: string | null) {
  return path ? stat(path).catch(() => null) : null;
}
