import { analyzeSource, nodeEndOfLife, packageManagerRequest, readProjectDir, type ProjectSpec } from '@slipway/analyzer';
import { LIMITS } from '@slipway/contract';
import { ToolchainError, type NodeToolchain } from '@slipway/toolchains';
import type { DeployContext, PipelineStep, StepLog } from '../deploy-context.js';
import { managerFor } from '../manager-commands.js';
import { StepFailure } from '../step-recorder.js';

/** The project's spec, warnings and hazards, its Node and its package manager; saved at once. */
export const analyzeStep: PipelineStep = {
  name: 'analyze',
  async run(context, log) {
    const { app, services } = context;
    const files = await readProjectDir(context.src);
    const { rootDirectory } = context.attempt;
    if (rootDirectory) log(`root directory ${rootDirectory} (the deploy's rootDirectory)`);
    const analysis = analyzeSource(files, { secretNames: app.secretNames, signInEnabled: app.signInEnabled, rootDirectory });
    const spec = analysis.spec;
    context.spec = spec;
    context.toolchain = await nodeFor(context, spec, log);
    context.managerRequest = packageManagerRequest(files);
    context.manager = await managerFor(services.managers, spec, context.managerRequest, context.toolchain, log);
    context.warnings.push(...analysis.warnings);
    context.hazards.push(...analysis.hazards);
    log(
      `${spec.kind}${spec.framework ? ` (${spec.framework}${spec.frameworkVersion ? ` ${spec.frameworkVersion}` : ''})` : ''}: install ${spec.commands.install ?? '-'}, build ${spec.commands.build ?? '-'}, start ${spec.commands.start ?? '-'}`,
    );
    for (const reason of spec.reasons) log(`  because ${reason}`);
    await context.save({ spec, warnings: context.warnings, hazards: context.hazards });
  },
};

/**
 * Resolves the project's declared Node.js to an exact version (`spec.nodeVersion`) and makes
 * sure it is on this machine; `node_version_unsupported` / `node_unavailable` otherwise, before
 * anything of the project ran. Null: the platform's own Node (nothing declared, or it fits).
 */
async function nodeFor(context: DeployContext, spec: ProjectSpec, log: StepLog): Promise<NodeToolchain | null> {
  const { config, toolchains } = context.services;
  const runsNode = Boolean(spec.commands.install || spec.commands.build || spec.commands.start);
  if (!runsNode) return null;
  try {
    const request = spec.nodeVersionRequest ?? null;
    const chosen = await toolchains.resolve(request);
    spec.nodeVersion = chosen.version;
    spec.reasons.push(
      request
        ? `Node.js ${chosen.version}: the newest offered version that fits ${request.source === 'engines' ? 'engines.node' : request.source} "${request.value}"`
        : `Node.js ${chosen.version}: nothing declared (engines.node, .nvmrc, .node-version), so the platform's default, Node ${config.NODE_DEFAULT_MAJOR}${config.NODE_DEFAULT_MAJOR === LIMITS.node.defaultMajor ? ' (the Active LTS; Node 20 is end-of-life)' : ' (NODE_DEFAULT_MAJOR)'}`,
    );
    const ended = nodeEndOfLife(chosen.version, request, LIMITS.node.endOfLife);
    if (ended) context.warnings.push(ended);
    const toolchain = await toolchains.ensure(chosen.version, log);
    log(
      `Node.js ${chosen.version}${request ? ` for ${request.source} "${request.value}"` : ` (nothing declared: the default, Node ${config.NODE_DEFAULT_MAJOR})`}${toolchain ? `, npm ${toolchain.npmVersion}` : ''}`,
    );
    return toolchain;
  } catch (error) {
    if (error instanceof ToolchainError) throw new StepFailure(error.code, error.message);
    throw error;
  }
}
