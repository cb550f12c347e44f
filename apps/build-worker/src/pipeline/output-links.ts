import { realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { resolveInTree, resolveLinkInTree } from '@slipway/runtime';
import { StepFailure } from './step-recorder.js';

/**
 * Where the build output lives: `project/outputDir` with every link on the way followed inside
 * the project only (`resolveInTree`). A directory that is, or passes through, a link leading
 * outside the project (`ln -s ../../../../pg dist`, `/etc`, a chain) fails the deploy with
 * `unsafe_output` before anything reads it. Nothing outside the project is ever looked at, so
 * the answer says nothing about what exists there. `null` when the output does not exist.
 */
export async function resolveOutputDir(project: string, outputDir: string): Promise<string | null> {
  const root = await realpath(project);
  const resolved = await resolveInTree(root, [], outputDir);
  const shown = outputDir === '.' ? 'the project directory' : `${outputDir}/`;
  if (resolved.kind === 'outside')
    throw new StepFailure('unsafe_output', `the build output ${shown} is a link that leads outside the project; nothing was packed`);
  if (resolved.kind === 'loop') throw new StepFailure('unsafe_output', `the build output ${shown} is a link loop; nothing was packed`);
  return resolved.exists ? join(root, ...resolved.segments) : null;
}

/** A link in the packed tree `dir` (real path) may stay only if it leads somewhere inside `dir`. */
export interface LinkCheck {
  dir: string;
  /** The project (real path) that holds `dir`, for messages: paths are shown relative to it. */
  project: string;
}

/**
 * Returns nothing when the link at `segments` (under `check.dir`) stays inside it all the way;
 * otherwise throws `unsafe_output` naming the link and where it leads, relative to the project
 * ("outside the project" when it leaves it; the host's paths are never shown).
 */
export async function checkOutputLink(check: LinkCheck, segments: string[]): Promise<void> {
  const resolved = await resolveLinkInTree(check.dir, segments);
  if (resolved.kind === 'inside') return;
  const shown = relative(check.project, join(check.dir, ...segments));
  if (resolved.kind === 'loop') throw new StepFailure('unsafe_output', `the build output contains a link loop at ${shown}; nothing was packed`);
  const packed = relative(check.project, check.dir);
  if (packed && !packed.startsWith('..')) {
    const fromProject = await resolveLinkInTree(check.project, [...packed.split('/'), ...segments]);
    if (fromProject.kind === 'inside') {
      const to = fromProject.segments.join('/') || '.';
      throw new StepFailure('unsafe_output', `the build output contains a link ${shown} -> ${to}, outside the packed directory ${packed}/; nothing was packed`);
    }
  }
  throw new StepFailure('unsafe_output', `the build output contains a link ${shown} that leads outside the project; nothing was packed`);
}
