import { randomUUID } from 'node:crypto';
import { asReleaseId } from '@slipway/platform-data';
import type { PipelineStep } from '../deploy-context.js';
import { assembleNextStandalone } from '../next-standalone.js';
import { packRelease } from '../release-packer.js';

/** The release artifact: the project (Node) or what is served (static), packed into blob storage. */
export const packageStep: PipelineStep = {
  name: 'package',
  async run(context, log) {
    const { project, src } = context;
    const id = asReleaseId(randomUUID());
    const artifactKey = `releases/${id}.tar.gz`;
    const kind = project.kind === 'node' || project.kind === 'node+static' ? 'node' : 'static';
    context.release = { id, artifactKey, kind };
    let dir = kind === 'node' ? src : context.servedDir!;
    if (context.standalone) {
      const standalone = await assembleNextStandalone(src, project.rootDirectory);
      dir = standalone.root;
      project.commands.start = standalone.start;
      project.startSource = 'framework';
      project.reasons.push(
        `Next.js standalone output (${project.rootDirectory ? `${project.rootDirectory}/` : ''}.next/standalone with .next/static and public): started with ${standalone.start} (reads PORT)`,
      );
    }
    // A Node release is mostly dependency code, packed once and unpacked once per machine: gzip's
    // fastest level (a Next.js standalone tree of 52 MiB here: 0.6 s and 16 MB instead of 1.4 s
    // and 14 MB at level 6; unpacking is no slower). Static releases keep 6: they are small.
    const packed = await packRelease(context.services.blobs, artifactKey, dir, {
      skipNodeModules: kind === 'static',
      precompress: kind === 'static',
      project: src,
      skipBuildCaches: kind === 'node',
      level: kind === 'node' ? 1 : 6,
    });
    context.release.artifactBytes = packed.bytes;
    // Refused here, before the release row exists: the failure path deletes the artifact.
    await context.services.storage.assertArtifactFits(context.attempt.applicationId, packed.bytes);
    project.artifact = { bytes: packed.bytes, files: packed.files };
    await context.save({ spec: project });
    log(`${artifactKey}: ${packed.files} files (${packed.precompressed} precompressed forms), ${packed.bytes} bytes, sha256 ${packed.sha256}`);
  },
};
