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
      dir = await assembleNextStandalone(src);
      project.commands.start = 'node server.js';
      project.startSource = 'framework';
      project.reasons.push('Next.js standalone output (.next/standalone with .next/static and public): started with node server.js (reads PORT)');
    }
    const packed = await packRelease(context.services.blobs, artifactKey, dir, { skipNodeModules: kind === 'static', precompress: kind === 'static', project: src, skipBuildCaches: kind === 'node' });
    project.artifact = { bytes: packed.bytes, files: packed.files };
    await context.save({ spec: project });
    log(`${artifactKey}: ${packed.files} files (${packed.precompressed} precompressed forms), ${packed.bytes} bytes, sha256 ${packed.sha256}`);
  },
};
