import { Logger } from '@nestjs/common';
import { runMain, waitForDependencies } from '@slipway/server';
import { loadEdgeConfig } from './config.js';
import { EdgeServer } from './edge-server.js';

runMain('edge', async () => {
  const config = loadEdgeConfig();
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
  if (config.SLIPWAY_LAUNCHER_PID) {
    const parent = config.SLIPWAY_LAUNCHER_PID;
    setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        stop('SIGTERM');
      }
    }, 1000).unref();
  }
});
