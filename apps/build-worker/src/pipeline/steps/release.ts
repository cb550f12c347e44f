import { unsandboxedRuntimeHazard } from '@slipway/analyzer';
import { withPortFound } from '../port-found.js';
import type { PipelineStep } from '../deploy-context.js';
import { LostLeaseError } from '../step-recorder.js';

/**
 * The release row stored, then the first two steps of making it live (libs/runtime
 * `ReleaseGoLive`): a Node release started by the edge and healthy; sign-in's trusted origins
 * refreshed; the edge asked to serve it. The worker commits it as live after this step.
 */
export const releaseStep: PipelineStep = {
  name: 'release',
  enters: 'releasing',
  async run(context, log) {
    const { project, app, services } = context;
    const { applicationId, deploymentId, attempt } = context.attempt;
    const release = context.release!;
    // A release carries no pnpm, yarn or bun: its package.json script runs through the npm of its Node.
    const viaNpm = /^((?:cd \S+ && )?)(pnpm|yarn|bun) run (\S+)$/.exec(project.commands.start ?? '');
    if (viaNpm) {
      project.commands.start = `${viaNpm[1]}npm run ${viaNpm[3]}`;
      project.reasons.push(`the release starts with npm run ${viaNpm[3]} (the ${viaNpm[2]} script, run by the npm of its Node)`);
    }
    if (
      !(await services.deployments.releases.create(applicationId, deploymentId, attempt, {
        id: release.id,
        kind: release.kind,
        artifactKey: release.artifactKey,
        artifactBytes: release.artifactBytes ?? 0,
        spec: project,
      }))
    )
      throw new LostLeaseError('lost');
    await services.handoff.prepare(
      applicationId,
      release,
      async (started) => {
        if (started?.containment.status === 'off') {
          context.hazards.push(unsandboxedRuntimeHazard(started.containment.reason));
          await context.save({ hazards: context.hazards });
        }
        if (started?.portFound) {
          const { portFound } = started;
          log(`the app listens on ${portFound.port}, not on PORT (${portFound.envPort}): routed to ${portFound.port}`);
          withPortFound(context.warnings, portFound);
          await context.save({ warnings: context.warnings });
        }
        // A preview's address is trusted by its parent's sign-in service (the origins are the parent's).
        if (app.signInEnabled) log(`sign-in trusted origins: ${(await services.signInOrigins.refresh(app.signInApplicationId)).join(', ')}`);
      },
      log,
    );
    log(`release ${release.id} is live`);
  },
};
