import { setTimeout as sleep } from 'node:timers/promises';
import { terminalJson, visibleControls } from '@slipway/contract';
import type { ApiClient } from '../api/api-client.js';
import { ApiError, UnreachableError } from '../api/api-error.js';
import { eventStream } from '../api/event-stream.js';
import { isFinished, taskPath, type DeploymentTask } from '../api/deployment-task.js';
import { OWNERS_API, resolveApplication } from '../api/owners-api.js';
import type { Terminal } from '../output/terminal.js';
import { TaskView, failureLines } from './task-view.js';

const SPIN_MS = 120;
/** Consecutive failed polls (platform restarting, network blip) tolerated before giving up. */
const MAX_POLL_FAILURES = 10;

export interface FollowOptions {
  client: ApiClient;
  apiKey: string;
  taskId: string;
  terminal: Terminal;
  pollIntervalMs: number;
  /**
   * The task's application, for the install and build output as it is produced (the owners' API's
   * live feed); without it, the one the API key reaches (`GET /dashboard/api/applications`).
   */
  applicationId?: string;
  /** Where the task is polled: the contract's `/api/v1/deployments/<id>`, or (a preview's) the owners' API's. */
  pollPath?: string;
  /**
   * `deploy --watch`: after success, wait this long past the task's end (the edge watches the
   * release's first minute live, then adds runtime hazards to the task) and report the task as it
   * is then.
   */
  watchMs?: number;
}

/** How long after the window the edge's hazards are taken as written (it writes them as its window ends). */
const WATCH_SLACK_MS = 5_000;

/**
 * Polls the task until it is `succeeded` or `failed`, drawing it live on a terminal, and
 * renders the outcome: the task JSON in --json mode, the summary otherwise. Exit 0 or 1.
 */
export async function followTask(options: FollowOptions, extra: Record<string, unknown> = {}): Promise<number> {
  const { terminal } = options;
  // The id came from the platform (the upload's answer, a 409's body) or the command line.
  const taskId = visibleControls(options.taskId);
  // Ctrl-C stops watching, not the deploy: say how to pick it up again.
  const onInterrupt = () => {
    terminal.out.write(`${terminal.live ? '\r\x1b[2K' : ''}`);
    terminal.err.write(`slipway: stopped following; the deploy goes on. Follow it again with: slipway status ${taskId} --wait\n`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  // stdout carries one JSON document at the end; stderr says meanwhile what is being waited for.
  if (terminal.json) terminal.err.write(`slipway: following task ${taskId} until it succeeds or fails\n`);
  const view = terminal.json ? undefined : new TaskView(terminal);
  const output = new AbortController();
  const streaming = showBuildOutput(options, output.signal, view);
  try {
    let task = await pollUntilFinished(options, view);
    // The build is over: its output stops before the first-minute watch draws its countdown.
    output.abort();
    await streaming;
    if (options.watchMs && task.status === 'succeeded') task = await watchFirstMinute(options, task, view);
    return reportTask(task, terminal, extra);
  } finally {
    output.abort();
    await streaming;
    process.off('SIGINT', onInterrupt);
  }
}

/**
 * The deploy's install and build output as the worker produces it (server-sent events; plain and
 * redacted by the worker, controls made visible here): above the live status line on a terminal,
 * on stderr with --json (stdout keeps its one JSON document). Best effort: without the feed, the
 * step logs still come with the task.
 */
async function showBuildOutput(options: FollowOptions, signal: AbortSignal, view?: TaskView): Promise<void> {
  const { terminal } = options;
  try {
    const applicationId = await resolveApplication(options.client, options.apiKey, options.applicationId);
    const path = `${OWNERS_API}/applications/${encodeURIComponent(applicationId)}/deployments/${encodeURIComponent(options.taskId)}/log/stream`;
    const response = await options.client.request('GET', path, { bearer: options.apiKey, headers: { accept: 'text/event-stream' } }, { signal });
    for await (const { data } of eventStream<{ step: string; text: string }>(response)) {
      for (const line of data.text.replace(/\n$/, '').split('\n')) {
        const shown = `${terminal.paint.dim(`${visibleControls(data.step)} │`)} ${visibleControls(line)}`;
        if (view) view.note(shown);
        else terminal.err.write(`${shown}\n`);
      }
    }
  } catch {
    /* aborted once the task finished, or no feed here: the task's step logs remain */
  }
}

/** The task as the platform sent it: exact in JSON (`terminalJson` escapes every control character), shown plain otherwise (TaskView). */
export function reportTask(task: DeploymentTask, terminal: Terminal, extra: Record<string, unknown> = {}, view = new TaskView(terminal)): number {
  if (terminal.json) {
    terminal.out.write(`${terminalJson({ ...task, ...extra })}\n`);
    // CI logs show stderr: the reason and the log tail belong there too, not only in the JSON.
    if (task.status === 'failed') terminal.err.write(`slipway: ${failureLines(task).join('\n')}\n`);
  } else view.summary(task);
  return task.status === 'failed' ? 1 : 0;
}

async function pollUntilFinished(options: FollowOptions, view?: TaskView): Promise<DeploymentTask> {
  let failures = 0;
  for (;;) {
    let task: DeploymentTask | undefined;
    try {
      task = await options.client.json<DeploymentTask>('GET', options.pollPath ?? taskPath(options.taskId), { bearer: options.apiKey });
      failures = 0;
    } catch (error) {
      const transient = error instanceof UnreachableError || (error instanceof ApiError && error.status >= 500);
      if (!transient || ++failures > MAX_POLL_FAILURES) {
        view?.clear();
        throw error;
      }
      view?.note(options.terminal.paint.yellow(`polling failed (${visibleControls(error instanceof ApiError ? error.line() : error.message)}); retrying`));
    }
    if (task) {
      view?.update(task);
      if (isFinished(task)) return task;
    }
    await wait(options.pollIntervalMs * (failures ? 2 : 1), view);
  }
}

/**
 * Waits out the release's first minute live (counted from the task's end) with a countdown, then
 * reads the task again: what the edge saw (crashes, 5xx answers, stderr errors) is in its hazards by then.
 */
async function watchFirstMinute(options: FollowOptions, task: DeploymentTask, view?: TaskView): Promise<DeploymentTask> {
  const finished = task.finishedAt ? Date.parse(task.finishedAt) : Date.now();
  const until = Math.max(finished, Date.now() - options.watchMs!) + options.watchMs! + WATCH_SLACK_MS;
  const seconds = Math.round(options.watchMs! / 1000);
  if (options.terminal.json) options.terminal.err.write(`slipway: deployed; watching its first ${seconds} s live for crashes, 5xx answers and errors\n`);
  else view?.note(`${options.terminal.paint.green('✓')} Live; watching its first ${seconds} s for crashes, 5xx answers and errors`);
  while (Date.now() < until) {
    if (view) drawCountdown(options.terminal, view, until);
    await sleep(Math.min(1000, Math.max(0, until - Date.now())));
  }
  view?.clear();
  for (let attempt = 0; ; attempt++) {
    try {
      return await options.client.json<DeploymentTask>('GET', options.pollPath ?? taskPath(options.taskId), { bearer: options.apiKey });
    } catch (error) {
      const transient = error instanceof UnreachableError || (error instanceof ApiError && error.status >= 500);
      if (!transient || attempt >= MAX_POLL_FAILURES) throw error;
      await sleep(options.pollIntervalMs);
    }
  }
}

function drawCountdown(terminal: Terminal, view: TaskView, until: number): void {
  view.draw(`${terminal.paint.cyan('…')} watching ${terminal.paint.dim(`${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s left`)}`);
}

async function wait(ms: number, view?: TaskView): Promise<void> {
  if (!view) return sleep(ms);
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await sleep(Math.min(SPIN_MS, until - Date.now()));
    view.tick();
  }
}
