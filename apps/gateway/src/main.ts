import cluster from 'node:cluster';
import { Logger } from '@nestjs/common';
import { exitWithParent, inheritedHttpFd, logLevelsFrom, runMain, startHttpApp, waitForDependencies } from '@slipway/service-kit';
import { loadGatewayConfig } from './config.js';
import { runPrimary, stopOnceOnRequest } from './workers.js';

runMain('gateway', async () => {
  const config = loadGatewayConfig();
  if (cluster.isPrimary && config.GATEWAY_WORKERS > 1) {
    // The primary only supervises (workers.ts); it never loads the application module.
    Logger.overrideLogger(logLevelsFrom(config.LOG_LEVEL));
    process.exit(await runPrimary(config));
  }
  const worker = cluster.isWorker;
  if (config.SLIPWAY_LAUNCHER_PID && !worker) exitWithParent('gateway', config.SLIPWAY_LAUNCHER_PID);
  await waitForDependencies({ postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }, config.STARTUP_TIMEOUT_MS);
  const { AppModule } = await import('./app.module.js');
  const app = await startHttpApp({
    name: 'gateway',
    module: AppModule.register(config),
    port: config.PORT,
    host: config.HOST,
    listenFd: inheritedHttpFd(config),
    logLevel: config.LOG_LEVEL,
    baseUrl: config.PUBLIC_URL,
    shutdownHooks: !worker,
  });
  if (worker) stopOnceOnRequest(() => app.close());
});
