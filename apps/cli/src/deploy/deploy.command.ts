import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { checkRootDirectory, isPreviewName, terminalJson, visibleControls } from '@slipway/contract';
import { ApiClient, uploadStream } from '../api/api-client.js';
import { ApiError } from '../api/api-error.js';
import { OWNERS_API, ownersCredential, resolveApplication } from '../api/owners-api.js';
import { UsageError, parseFlags } from '../args.js';
import { confirm, isInteractive, type CommandIo } from '../command-io.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, resolveConfig } from '../config.js';
import { LiveLine, createTerminal, formatBytes, formatDuration, progressBar, type Terminal } from '../output/terminal.js';
import { followTask } from './follow-task.js';
import { multipartArchive, sourceArchive } from './source-archive.js';
import { listSourceFiles, type SourceListing } from './source-files.js';

export const DEPLOY_USAGE = `Usage: slipway deploy [dir] [--root-directory <dir>] [--preview [name]] [--no-wait] [--follow] [--watch] [--include <pattern>]... [--json] [--verbose]

Packs the folder (default: the current one) as a streamed tar.gz and deploys it, then follows
the build step by step until it succeeds (exit 0) or fails (exit 1, with the failing step's log).
The install and build output is shown as it is produced (on stderr with --json), redacted as the
step logs are. Honours .gitignore and .slipwayignore; never sends node_modules, .git or .env*
unless --include names them (gitignore-style pattern, repeatable: --include .env.production).
  --root-directory <dir>
                      in a monorepo, the directory inside [dir] that holds the application to
                      build, e.g. apps/web (as Vercel's "Root Directory"). The whole folder is
                      still sent (workspace packages and the root lockfile are needed); this
                      wins over "rootDirectory" in the project's slipway.json.
  --preview [name]    deploy a preview instead of production: built and served at its own
                      address {slug}--{name}, with the preview values of the secrets
                      (slipway secrets set --preview); production keeps serving what it did.
                      The name defaults to the git branch (else "preview"); --preview=<name>
                      is never read as the folder. Previews expire after PREVIEW_TTL_HOURS
                      (default 7 days) from their last deploy and count against the plan.
                      Uses the owners' API: the project API key, or --token with --application.
  --no-wait           print the task id and return once the upload is accepted
  --follow            when a deploy is already running, follow it instead (asked on a terminal)
  --watch             after success, wait out the release's first minute live and print what
                      the platform saw in it as hazards: runtime_crashed (crashes, restarts),
                      runtime_5xx (5xx answers), runtime_errors (error lines on stderr)

${CONNECTION_USAGE}`;

const REDRAW_MS = 80;
/** The edge's watch of a release's first minute live (its RELEASE_WATCH_MS default). */
const FIRST_MINUTE_MS = 60_000;

export async function deployCommand(rawArgs: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const { args, preview: previewFlag } = takePreviewFlag(rawArgs);
  const { values, positionals } = parseFlags(args, {
    ...CONNECTION_OPTIONS,
    'no-wait': { type: 'boolean', default: false },
    follow: { type: 'boolean', default: false },
    watch: { type: 'boolean', default: false },
    include: { type: 'string', multiple: true },
    application: { type: 'string' },
    'root-directory': { type: 'string' },
  });
  if (values.help) {
    io.out.write(`${DEPLOY_USAGE}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`deploy takes one folder, got ${positionals.length}: ${positionals.join(' ')}`);
  const dir = resolve(positionals[0] ?? '.');
  if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new UsageError(`not a folder: ${dir}`);
  const rootDirectory = values['root-directory'] === undefined ? undefined : rootDirectoryFlag(values['root-directory']);
  const config = resolveConfig(values, env, dir);
  const terminal = createTerminal(io.out, io.err, { json: values.json, verbose: values.verbose, noColor: config.noColor });
  const apiKey = previewFlag ? ownersCredential(config) : config.apiKey;
  if (!apiKey) throw new UsageError('no API key: pass --api-key, set SLIPWAY_API_KEY, or put "apiKey" in .slipway.json');
  const previewName = previewFlag ? (previewFlag.name ?? (await branchPreviewName(dir))) : undefined;

  const listing = await listSourceFiles(dir, values.include ?? []);
  // A cloned folder may hold file names with control characters: shown, never interpreted.
  if (terminal.verbose) for (const skipped of listing.skipped) io.err.write(`slipway: not sent: ${visibleControls(skipped)}\n`);
  if (listing.files.length === 0) throw new UsageError(`nothing to deploy in ${dir}: every file is ignored`);

  const client = new ApiClient(config.url);
  // A preview goes through the owners' API, which names the application in its paths.
  const applicationId = previewName !== undefined ? await resolveApplication(client, apiKey, config.applicationId) : config.applicationId;
  const target = previewName !== undefined && applicationId ? { applicationId, previewName } : undefined;
  const follow = (taskId: string) =>
    followTask({
      client,
      apiKey,
      taskId,
      terminal,
      pollIntervalMs: config.pollIntervalMs,
      applicationId,
      ...(target ? { pollPath: `${OWNERS_API}/applications/${encodeURIComponent(target.applicationId)}/deployments/${encodeURIComponent(taskId)}` } : {}),
      ...(values.watch ? { watchMs: FIRST_MINUTE_MS } : {}),
    });
  let taskId: string;
  try {
    taskId = await upload(client, apiKey, listing, terminal, { preview: target, rootDirectory });
  } catch (error) {
    if (error instanceof ApiError && error.code === 'deploy_in_progress' && error.taskId) {
      // Shown (asked about, hinted at) as text; followed by the id as the platform sent it.
      const running = visibleControls(error.taskId);
      const accept =
        values.follow ||
        (terminal.live && isInteractive(io) && (await confirm(io, `A deploy of this application is already running (task ${running}). Follow it?`)));
      if (accept) {
        if (terminal.json) io.err.write(`slipway: a deploy of this application is already running (task ${running})\n`);
        else io.out.write(`Following the running deploy ${terminal.paint.dim(`(task ${running})`)}\n`);
        return follow(error.taskId);
      }
      error.hint = `follow it with: slipway deploy --follow, or slipway status ${running} --wait`;
    }
    if (error instanceof ApiError && error.code === 'rate_limited' && error.retryAfterSeconds) {
      const at = new Date(Date.now() + error.retryAfterSeconds * 1000);
      error.hint = `retry after ${at.toLocaleTimeString()} (in ${formatDuration(error.retryAfterSeconds * 1000)})`;
    }
    throw error;
  }

  if (values['no-wait']) {
    if (terminal.json) io.out.write(`${terminalJson({ taskId, status: 'queued', files: listing.files.length, bytes: listing.totalBytes })}\n`);
    else io.out.write(visibleControls(`Queued: task ${taskId}\nFollow it with: slipway status ${taskId} --wait\n`));
    return 0;
  }
  if (!terminal.json)
    io.out.write(
      `Deploying ${target ? `preview ${terminal.paint.bold(target.previewName)} ` : ''}${terminal.paint.dim(`(task ${visibleControls(taskId)})`)}\n`,
    );
  return follow(taskId);
}

/**
 * Streams the archive to `POST /api/v1/deploy` (a preview: the owners' API's
 * `…/deploy?target=preview&name=`) with a progress bar, the `rootDirectory` field before it;
 * answers the task id.
 */
async function upload(
  client: ApiClient,
  apiKey: string,
  listing: SourceListing,
  terminal: Terminal,
  options: { preview?: { applicationId: string; previewName: string }; rootDirectory?: string },
): Promise<string> {
  const { preview, rootDirectory } = options;
  const line = new LiveLine(terminal);
  const started = Date.now();
  const total = listing.totalBytes;
  let sent = 0;
  let lastDraw = 0;
  const draw = (read: number, force = false) => {
    const now = Date.now();
    if (!force && now - lastDraw < REDRAW_MS) return;
    lastDraw = now;
    const fraction = total ? read / total : 1;
    line.draw(
      `Uploading ${terminal.paint.cyan(progressBar(fraction))} ${String(Math.floor(fraction * 100)).padStart(3)}%  ${formatBytes(read)} of ${formatBytes(total)} · ${formatBytes(sent)} sent`,
    );
  };
  draw(0);
  const archive = sourceArchive(listing.files, draw);
  const { contentType, body } = multipartArchive(archive, (bytes) => (sent += bytes), rootDirectory === undefined ? {} : { rootDirectory });
  try {
    const path = preview
      ? `${OWNERS_API}/applications/${encodeURIComponent(preview.applicationId)}/deploy?target=preview&name=${encodeURIComponent(preview.previewName)}`
      : '/api/v1/deploy';
    const accepted = await uploadStream<{ taskId: string }>(client.baseUrl, path, { bearer: apiKey, headers: { 'content-type': contentType } }, body);
    draw(total, true);
    const files = `${listing.files.length} file${listing.files.length === 1 ? '' : 's'}`;
    line.clear();
    if (!terminal.json)
      line.print(
        `${terminal.paint.green('✓')} Uploaded ${files}, ${formatBytes(total)} ${terminal.paint.dim(`(${formatBytes(sent)} compressed, ${formatDuration(Date.now() - started)})`)}`,
      );
    return accepted.taskId;
  } catch (error) {
    line.clear();
    throw error;
  } finally {
    body.destroy();
  }
}

/**
 * `--preview`, `--preview=<name>` or `--preview <name>` (a following word that is a preview
 * name and not a folder here), taken out of the arguments before the other flags are parsed.
 */
export function takePreviewFlag(args: string[]): { args: string[]; preview?: { name?: string } } {
  const rest: string[] = [];
  let preview: { name?: string } | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg.startsWith('--preview=')) {
      preview = { name: checkPreviewName(arg.slice('--preview='.length)) };
    } else if (arg === '--preview') {
      const next = args[i + 1];
      preview = next !== undefined && isPreviewName(next) && !isFolder(next) ? { name: args[++i] } : {};
    } else rest.push(arg);
  }
  return { args: rest, ...(preview ? { preview } : {}) };
}

/** `--root-directory`, checked as the platform checks it (so a typo is not found after the upload). */
export function rootDirectoryFlag(value: string): string {
  const check = checkRootDirectory(value);
  if (!check.ok) throw new UsageError(`--root-directory ${check.problem}`);
  return check.value;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function checkPreviewName(name: string): string {
  if (!isPreviewName(name))
    throw new UsageError(`not a preview name: "${visibleControls(name.slice(0, 64))}" (1 to 32 lowercase letters, digits and single dashes)`);
  return name;
}

/** The default preview name: the folder's git branch, made a name (`feature/Login` → `feature-login`), else `preview`. */
async function branchPreviewName(dir: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', ['-C', dir, 'rev-parse', '--abbrev-ref', 'HEAD'], { timeout: 5000 });
    const name = stdout
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 32)
      .replace(/-+$/g, '');
    return name && name !== 'head' && isPreviewName(name) ? name : 'preview';
  } catch {
    return 'preview';
  }
}
