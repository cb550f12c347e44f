import { mkdir, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { BuildDiskUnavailable } from '../build-disk.js';
import type { PipelineStep } from '../deploy-context.js';
import { extractSource } from '../source-extractor.js';
import { StepFailure } from '../step-recorder.js';

/** The stored source, unpacked into a fresh workspace. */
export const receiveStep: PipelineStep = {
  name: 'receive',
  async run(context, log) {
    const { sourceKey } = context.attempt;
    if (!sourceKey) throw new StepFailure('bad_source', 'the deployment has no stored source');
    const { disks } = context.services;
    if (disks.bounded) {
      // Everything of this build on disk lives on its own fixed-size file system from here on.
      context.disk = await disks.mount(basename(context.root)).catch((error: Error) => {
        throw error instanceof BuildDiskUnavailable ? new StepFailure('sandbox_unavailable', `${error.message}; nothing of the project was received`) : error;
      });
      log(`build disk: ${Math.round(context.disk.sizeBytes / 1024 ** 2)} MiB (BUILD_DISK_MB)`);
    } else {
      await rm(context.root, { recursive: true, force: true });
    }
    await mkdir(context.src, { recursive: true });
    const source = await context.services.blobs.get(sourceKey).catch(() => {
      throw new StepFailure('bad_source', `the stored source ${sourceKey} is missing`);
    });
    const { files, links, bytes } = await extractSource(source, context.src);
    log(`extracted ${files} files${links ? ` and ${links} symbolic link${links === 1 ? '' : 's'}` : ''} (${bytes} bytes)`);
  },
};
