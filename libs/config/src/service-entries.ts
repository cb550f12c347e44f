/**
 * Where each built process starts, relative to the repository root: the one list the launcher,
 * the test harnesses (libs/testing) and the fault, e2e and launcher suites read, so a moved entry
 * point is changed here once. Each is its project's `dist/` output: `pnpm nx run-many -t build`
 * (or a target's `^build`) makes it.
 */
export const SERVICE_ENTRIES = {
  gateway: 'apps/gateway/dist/main.js',
  'auth-service': 'apps/auth-service/dist/main.js',
  'build-worker': 'apps/build-worker/dist/main.js',
  edge: 'apps/edge/dist/main.js',
  /** The runtime supervisor (owns the apps' processes and nginx under `pnpm start`). */
  runtime: 'apps/runtime-supervisor/dist/main.js',
  cli: 'apps/cli/dist/main.js',
} as const;

export type ServiceName = keyof typeof SERVICE_ENTRIES;
