import { availableParallelism, totalmem } from 'node:os';

/** Kept for Postgres, Redis, the platform's services and the running apps before any build slot. */
export const MEMORY_RESERVED_BYTES = 4 * 1024 ** 3;
export const MAX_BUILD_SLOTS = 16;

export interface Machine {
  cores: number;
  memoryBytes: number;
}

export function thisMachine(): Machine {
  return { cores: availableParallelism(), memoryBytes: totalmem() };
}

/**
 * `WORKER_CONCURRENCY=auto`: the builds this machine can afford at once. One core is kept for the
 * platform and the apps (a build may use up to its CPU cap), and every slot must fit its build's
 * whole memory limit (`BUILD_MEMORY_MB`) after what the platform keeps. Always at least one.
 */
export function autoBuildSlots(machine: Machine, memoryPerBuildBytes: number): number {
  const byCores = machine.cores - 1;
  const byMemory = Math.floor((machine.memoryBytes - MEMORY_RESERVED_BYTES) / memoryPerBuildBytes);
  return Math.max(1, Math.min(byCores, byMemory, MAX_BUILD_SLOTS));
}

/**
 * `BUILDS_PER_OWNER=auto`: one slot fewer than the worker has, so with two or more slots an owner's
 * builds never hold every slot and another owner's deploy starts at once. With one slot, one.
 */
export function autoBuildsPerOwner(slots: number): number {
  return Math.max(1, slots - 1);
}
