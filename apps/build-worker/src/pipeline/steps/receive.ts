import { mkdir, rm } from 'node:fs/promises';
import type { PipelineStep } from '../deploy-context.js';
import { extractSource } from '../source-extractor.js';
import { StepFailure } from '../step-recorder.js';

/** The stored source, unpacked into a fresh workspace. */
export const receiveStep: PipelineStep = {
  name: 'receive',
  async run(context, log) {
    const { sourceKey } = context.attempt;
    if (!sourceKey) throw new StepFailure('bad_source', 'the deployment has no stored source');
    await rm(context.root, { recursive: true, force: true });
    await mkdir(context.src, { recursive: true });
    const source = await context.services.blobs.get(sourceKey).catch(() => {
      throw new StepFailure('bad_source', `the stored source ${sourceKey} is missing`);
    });
    const { files, bytes } = await extractSource(source, context.src);
    log(`extracted ${files} files (${bytes} bytes)`);
  },
};
