import { outputHazards, readProjectDir, type ProjectSpec } from '@slipway/analyzer';
import type { PipelineStep } from '../deploy-context.js';
import { resolveOutputDir } from '../output-links.js';

/** The files that will be served, searched for secrets and other hazards; saved at once. */
export const scanStep: PipelineStep = {
  name: 'scan',
  async run(context, log) {
    const { project, src, app } = context;
    // Resolved inside the project only: an output that is a link leading out fails here (unsafe_output).
    const servedDir = await servedDirOf(project, src);
    context.servedDir = servedDir;
    // A Node server may serve public/ at / besides its outputDir (Next.js does): scanned too, so no hazard depends on the kind.
    const alsoServed = servedDir && (project.kind === 'node' || project.kind === 'node+static') ? await resolveOutputDir(src, 'public') : null;
    if (!servedDir) {
      log('nothing is served as static files');
      return;
    }
    const served = (await readProjectDir(servedDir)).filter((f) => !f.path.startsWith('node_modules/'));
    if (alsoServed && alsoServed !== servedDir && !alsoServed.startsWith(`${servedDir}/`)) {
      served.push(...(await readProjectDir(alsoServed)).map((f) => ({ ...f, path: `public/${f.path}` })));
    }
    context.hazards.push(...outputHazards(served, { secrets: app.scanSecrets, cookieSecret: app.cookieSecret }));
    log(`scanned ${served.length} served files`);
    await context.save({ warnings: context.warnings, hazards: context.hazards });
  },
};

function servedDirOf(spec: ProjectSpec, src: string): Promise<string | null> {
  if (spec.outputDir) return resolveOutputDir(src, spec.outputDir);
  return spec.kind === 'node' ? resolveOutputDir(src, 'public') : Promise.resolve(null);
}
