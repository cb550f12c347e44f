import { visibleControls } from '@slipway/contract';
import { ApiClient } from '../api/api-client.js';
import { ApiError } from '../api/api-error.js';
import { taskPath, type DeploymentTask } from '../api/deployment-task.js';
import { OWNERS_API, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import type { CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { followTask, reportTask } from '../deploy/follow-task.js';
import { TaskView } from '../deploy/task-view.js';
import { createTerminal } from '../output/terminal.js';

export const STATUS_USAGE = `Usage: slipway status <taskId> [--wait] [--json] [--verbose]

Shows a deployment task: its steps, warnings, hazards and outcome. Exit 1 when it failed.
A preview's task (slipway deploy --preview) is read through the owners' API.
  --wait              follow it until it succeeds or fails

${CONNECTION_USAGE}`;

export async function statusCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...CONNECTION_OPTIONS, wait: { type: 'boolean', default: false } });
  if (values.help) {
    io.out.write(`${STATUS_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`status takes one task id\n\n${STATUS_USAGE}`);
  const taskId = positionals[0]!;
  const config = resolveConfig(values, env, process.cwd());
  const apiKey = config.apiKey;
  if (!apiKey) throw new UsageError('no API key: pass --api-key, set SLIPWAY_API_KEY, or put "apiKey" in .slipway.json');
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const client = new ApiClient(config.url);
  // The contract's poll sees production's tasks; a preview's is its application's in the owners' API.
  let pollPath = taskPath(taskId);
  let task: DeploymentTask;
  try {
    task = await client.json<DeploymentTask>('GET', pollPath, { bearer: apiKey });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    const applicationId = await resolveApplication(client, apiKey, config.applicationId);
    pollPath = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/deployments/${encodeURIComponent(taskId)}`;
    task = await client.json<DeploymentTask>('GET', pollPath, { bearer: apiKey });
  }
  if (values.wait) return followTask({ client, apiKey, taskId, terminal, pollIntervalMs: config.pollIntervalMs, pollPath });

  const view = new TaskView(terminal);
  if (!terminal.json) {
    io.out.write(`Task ${visibleControls(task.taskId)}: ${terminal.paint.bold(visibleControls(task.status))}\n`);
    view.snapshot(task);
  }
  return reportTask(task, terminal, {}, view);
}
