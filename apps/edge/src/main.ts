import { Logger } from '@nestjs/common';
import { EdgePlane } from '@slipway/data-plane';
import { runMain, waitForDependencies } from '@slipway/service-kit';
import { loadEdgeConfig } from './config.js';
import { EdgeServer } from './edge-server.js';

/** The launcher gone (even by SIGKILL): stop (the runtime supervisor stops the apps the same way). */
function watchLauncher(pid: number | undefined, stop: (signal: NodeJS.Signals) => void): NodeJS.Timeout | undefined {
  if (!pid) return undefined;
  return setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch {
      stop('SIGTERM');
    }
  }, 1000).unref();
}

/**
 * `SLIPWAY_EDGE_STANDBY=1` (the launcher keeps one such process beside the edge): every module is
 * loaded — most of an edge's start-up time — and it waits for SIGUSR2, sent when the running edge
 * died, to take its place: connect, load routes, adopt the running apps and listen.
 */
async function standBy(config: ReturnType<typeof loadEdgeConfig>): Promise<void> {
  const logger = new Logger('edge');
  const activated = new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));
  const keepAlive = setInterval(() => undefined, 60_000);
  const watch = watchLauncher(config.SLIPWAY_LAUNCHER_PID, () => process.exit(0));
  const onTerm = () => process.exit(0);
  process.once('SIGTERM', onTerm);
  logger.log('standby edge: loaded, ready to take over');
  await activated;
  clearInterval(keepAlive);
  clearInterval(watch);
  process.removeListener('SIGTERM', onTerm);
  logger.log('standby edge: taking over');
}

runMain('edge', async () => {
  const config = loadEdgeConfig();
  // nginx missing with EDGE_DATA_PLANE=nginx: one line, before anything else.
  if (config.EDGE_DATA_PLANE === 'nginx') EdgePlane.check(config);
  if (config.SLIPWAY_EDGE_STANDBY === '1') await standBy(config);
  await waitForDependencies({ postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }, config.STARTUP_TIMEOUT_MS);
  const edge = await EdgeServer.start(config);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    new Logger('edge').log(`${signal}: stopping apps and closing`);
    edge.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  watchLauncher(config.SLIPWAY_LAUNCHER_PID, stop);
});
