import cluster, { type Worker } from 'node:cluster';
import { Logger } from '@nestjs/common';
import { exitWithParent } from '@slipway/service-kit';
import type { GatewayConfig } from './config.js';

/** The primary's message that asks a worker to stop (close the server, finish requests, exit). */
export const SHUTDOWN_MESSAGE = 'slipway:shutdown';
/** A worker that has not stopped this long after it was asked to is killed. */
const STOP_GRACE_MS = 15_000;
/** More restarts than this within RESTART_WINDOW_MS: the primary gives up and stops everything. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

/**
 * `GATEWAY_WORKERS` > 1: this process (the node:cluster primary) serves nothing itself. It forks
 * that many workers, each a whole gateway (its own pg pool, Redis connections, Nest app) that
 * listens on the same port; the primary hands them connections in turn. It never loads the
 * application module.
 *
 * - A worker that exits before it ever listened (e.g. Postgres not reachable within
 *   STARTUP_TIMEOUT_MS; its own one-line reason is on stderr) stops the whole gateway: exit 1.
 * - A worker that dies later is replaced, unless that happened more than MAX_RESTARTS times in a
 *   minute (then everything stops, exit 1).
 * - SIGTERM / SIGINT (or the launcher going away): every worker is asked once, over IPC, to
 *   stop; a worker still there after STOP_GRACE_MS is killed; then the primary exits 0. A second
 *   signal kills the workers at once. Ctrl-C reaches the workers too (same process group); a
 *   worker stops once however many signals and messages reach it.
 * - If the primary itself is killed (SIGKILL), node:cluster workers exit as soon as their IPC
 *   channel closes, so nothing is left behind.
 */
export function runPrimary(config: GatewayConfig): Promise<number> {
  const logger = new Logger('Gateway');
  const count = config.GATEWAY_WORKERS;
  const everListened = new Set<number>();
  const restarts: number[] = [];
  let announced = false;
  let stopping = false;
  let exitCode = 0;
  let killTimer: NodeJS.Timeout | undefined;
  let resolveExit: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (resolveExit = resolve));

  const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const killAll = () => {
    for (const worker of workers()) worker.process.kill('SIGKILL');
  };
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const worker of workers()) {
      if (!worker.isConnected()) continue;
      try {
        worker.send(SHUTDOWN_MESSAGE, () => undefined);
      } catch {
        /* its channel just closed: it is exiting anyway */
      }
    }
    killTimer = setTimeout(() => {
      logger.warn(`workers did not stop within ${STOP_GRACE_MS / 1000}s; killing them`);
      killAll();
    }, STOP_GRACE_MS);
    if (workers().length === 0) finish();
  };
  const finish = () => {
    if (killTimer) clearTimeout(killTimer);
    resolveExit(exitCode);
  };

  cluster.on('listening', (worker, address) => {
    everListened.add(worker.id);
    if (!announced && everListened.size === count) {
      announced = true;
      logger.log(`${count} worker processes serving http://${address.address ?? config.HOST}:${address.port}`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (workers().length === 0) finish();
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!everListened.has(worker.id)) {
      logger.error(`a worker process exited (${how}) before it served; stopping`);
      stopAll(1);
      return;
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length > MAX_RESTARTS) {
      logger.error(`worker processes keep exiting (${restarts.length} in a minute, last: ${how}); stopping`);
      stopAll(1);
      return;
    }
    logger.warn(`worker process ${worker.process.pid} exited (${how}); starting another`);
    cluster.fork();
  });

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      logger.log(`${signal}: stopping ${workers().length} worker processes`);
      stopAll(0);
      return;
    }
    logger.warn(`${signal} again: killing the worker processes`);
    exitCode = 1;
    killAll();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (config.SLIPWAY_LAUNCHER_PID) exitWithParent('gateway', config.SLIPWAY_LAUNCHER_PID);

  for (let i = 0; i < count; i++) cluster.fork();
  return done;
}

/**
 * In a worker: stop the app once, on the first of SIGTERM, SIGINT or the primary's message (Nest's
 * own shutdown hooks are off in workers: a second signal would kill the process mid-shutdown).
 */
export function stopOnceOnRequest(close: () => Promise<void>): void {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`gateway: error while stopping: ${(error as Error)?.message ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('message', (message) => {
    if (message === SHUTDOWN_MESSAGE) stop();
  });
}
