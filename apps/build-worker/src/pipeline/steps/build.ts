import { lstat, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NITRO_BUILD_OUTPUT, buildOutputWarnings, parsePackageJson, type ProjectSpec } from '@slipway/analyzer';
import { realDirectory } from '../build-caches.js';
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
    // A monorepo's application (or a project in a sub-folder): its own directory, every component a real one.
    const appDir = project.rootDirectory ? await realDirectory(src, project.rootDirectory) : src;
    if (!appDir) throw new StepFailure('output_missing', `${project.rootDirectory}/ is not a directory of the project`);
    // After the build, a Node release's dev dependencies go (each manager's own prune).
    const pkg = parsePackageJson(await readPackageJsonOf(appDir));
    const prune = project.workspace
      ? { command: null, why: "a workspace's packages share the top level's node_modules (each manager's prune there would reach every package)" }
      : pruneCommand(project, pkg, context.managerRequest);
    const standaloneEnv = project.commands.build ? nextStandaloneBuildEnv(project, pkg) : {};
    if (!project.commands.build && !prune.command) return 'skipped';
    const sandbox = await context.codeSandbox();
    if (project.commands.build) {
      // Kept caches only where the build runs sandboxed (as the build user, whose files they are).
      const keepCaches = sandbox.mode.kind === 'bwrap';
      if (keepCaches) {
        const owner = sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined;
        const restored = await buildCaches.restore(applicationId, appDir, owner);
        if (restored.length) log(`build caches restored: ${restored.join(', ')}`);
        // Next.js asks CI builds to "configure build caching" unless .next/cache exists: it is configured (kept per application).
        else if (project.framework === 'next') await buildCaches.prepare(appDir, '.next/cache', owner);
      }
      const output = await commands.exec(sandbox, project.commands.build, {
        root,
        src,
        env: { ...commands.buildEnv(sandbox, app.buildVariables, root, node, pm), ...standaloneEnv },
        toolchain: node,
        manager: pm,
        failure: 'build_failed',
        shutdown: context.shutdown,
        budget: context.budget,
        disk: context.disk,
        usage: context,
        log,
      });
      context.warnings.push(...buildOutputWarnings(context.recorder.redact(output)));
      const server = await serverFromOutput(project, src, appDir);
      if (server) log(`the build wrote a server: ${server}`);
      // What the build must produce (a framework's server bundle, e.g. SvelteKit's build/), else what is served.
      const produced = project.buildOutput ?? project.outputDir;
      if (produced && produced !== '.' && !(await statOf(await resolveOutputDir(src, produced)))?.isDirectory()) {
        throw new StepFailure('output_missing', `the build finished but did not produce ${produced}/`);
      }
      if (keepCaches) {
        const { kept, notKept } = await buildCaches.keep(applicationId, appDir);
        if (kept.length) log(`build caches kept for the next build, not shipped: ${kept.join(', ')}`);
        if (notKept) log(`build caches not kept: ${notKept}`);
      }
    }
    if (standaloneEnv.NEXT_PRIVATE_STANDALONE && (await hasNextStandalone(appDir, project.rootDirectory))) {
      context.standalone = true;
      log('Next.js standalone output: the release ships .next/standalone (only the traced dependencies), started with node server.js');
      return;
    }
    if (!prune.command) {
      log(`dev dependencies not pruned: ${prune.why}`);
      return;
    }
    const downloads = await context.downloadCacheDir(sandbox.mode.kind === 'bwrap' ? { uid: sandbox.mode.uid, gid: sandbox.mode.gid } : undefined);
    await commands.exec(sandbox, prune.command, {
      root,
      src,
      env: { ...commands.installEnv(sandbox, downloads, root, node, pm), NODE_ENV: 'production' },
      cacheDir: downloads,
      toolchain: node,
      manager: pm,
      failure: 'build_failed',
      shutdown: context.shutdown,
      budget: context.budget,
      disk: context.disk,
      usage: context,
      log,
    });
  },
};

/**
 * A front end whose build wrote a server after all (Nitro's `.output/server/index.mjs`, when no
 * start script or slipway.json said how to run it) becomes a Node release started with it; the
 * spec says so. Returns what was found, or null.
 */
async function serverFromOutput(project: ProjectSpec, src: string, appDir: string): Promise<string | null> {
  if (project.overrides.includes('outputDirectory') || project.overrides.includes('startCommand')) return null;
  // Nothing starts it yet, or the framework's own start (TanStack Start served by srvx) found no build output of its own.
  const guessWrong = project.startSource === 'framework' && project.buildOutput !== null && !(await realDirectory(src, project.buildOutput));
  if (project.commands.start && !guessWrong) return null;
  const found = NITRO_BUILD_OUTPUT;
  const written = (await realDirectory(appDir, dirname(found.entry))) && (await lstat(join(appDir, found.entry)).catch(() => null))?.isFile();
  if (!written) return null;
  const under = (path: string) => (project.rootDirectory ? `${project.rootDirectory}/${path}` : path);
  project.kind = 'node';
  project.spaFallback = false;
  project.commands.start = project.rootDirectory ? `cd ${project.rootDirectory} && ${found.start}` : found.start;
  project.startSource = 'framework';
  project.outputDir = under(found.outputDir);
  project.buildOutput = under(found.buildOutput);
  project.port = { source: 'env', fixed: null };
  project.reasons.push(found.reason);
  return found.start;
}

function statOf(path: string | null) {
  return path ? stat(path).catch(() => null) : null;
}
