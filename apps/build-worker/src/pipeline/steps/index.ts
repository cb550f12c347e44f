import { DEPLOY_STEPS } from '@slipway/contract';
import type { PipelineStep } from '../deploy-context.js';
import { analyzeStep } from './analyze.js';
import { buildStep } from './build.js';
import { installStep } from './install.js';
import { packageStep } from './package.js';
import { receiveStep } from './receive.js';
import { releaseStep } from './release.js';
import { scanStep } from './scan.js';

/** The pipeline: the seven steps, in the order the contract lists them (checked when loaded). */
export const PIPELINE: readonly PipelineStep[] = [receiveStep, analyzeStep, installStep, buildStep, scanStep, packageStep, releaseStep];

if (PIPELINE.map((step) => step.name).join() !== DEPLOY_STEPS.join()) {
  throw new Error(`the pipeline's steps (${PIPELINE.map((step) => step.name).join(', ')}) are not the contract's (${DEPLOY_STEPS.join(', ')})`);
}
