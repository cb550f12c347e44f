import { join, resolve } from 'node:path';
import type { WorkerConfig } from './config.js';

export const BLOBS = Symbol('BLOBS');
export const SANDBOX = Symbol('SANDBOX');
export const PUBLISHER = Symbol('PUBLISHER');

/** Workspaces and caches: `BUILD_DIR`, default `<SLIPWAY_HOME or .slipway>/build`. */
export function buildDirOf(config: Pick<WorkerConfig, 'BUILD_DIR' | 'SLIPWAY_HOME'>): string {
  return resolve(config.BUILD_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'build'));
}
