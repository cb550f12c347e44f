/**
 * `node apps/runtime-supervisor/dist/main.js`: the runtime supervisor `pnpm start` runs beside the
 * edge (same environment, PORT = the edge's port). It owns the apps' processes so that an edge
 * crash does not take them down (runtime-supervisor.ts), and with the nginx plane it keeps nginx
 * (libs/data-plane's NginxKeeper).
 */
import { join, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { createBlobStore } from '@slipway/blob';
import { NginxKeeper, createLocalDriver } from '@slipway/data-plane';
import { runMain } from '@slipway/service-kit';
import { loadSupervisorConfig } from './config.js';
import { RuntimeSupervisor } from './runtime-supervisor.js';

runMain('runtime', async () => {
  const config = loadSupervisorConfig();
  if (!config.RUNTIME_SUPERVISOR_SOCKET) throw new Error('RUNTIME_SUPERVISOR_SOCKET is required: the socket the edge reaches this supervisor at');
  const runtimeDir = resolve(config.RUNTIME_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'runtime'));
  // Its state (what runs, the apps' log FIFOs) under the runtime dir: its successor adopts the apps.
  const driver = await createLocalDriver(config, createBlobStore(config), runtimeDir, join(runtimeDir, 'supervisor'));
  const supervisor = new RuntimeSupervisor(driver, { socketPath: config.RUNTIME_SUPERVISOR_SOCKET, adoptGraceMs: config.RUNTIME_ADOPT_GRACE_MS });
  // The nginx data plane lives here, beside the apps: an edge restart does not interrupt their traffic.
  const nginx = config.EDGE_DATA_PLANE === 'nginx' && config.EDGE_NGINX_OWNER === 'supervisor' ? new NginxKeeper(config, runtimeDir) : undefined;
  await nginx?.start();
  await supervisor.listen();
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    new Logger('runtime').log(`${why}: stopping every app`);
    Promise.all([supervisor.close(), nginx?.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The launcher gone (even by SIGKILL): the apps go with this process, never left running alone.
  if (config.SLIPWAY_LAUNCHER_PID) {
    const parent = config.SLIPWAY_LAUNCHER_PID;
    setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        stop('the launcher is gone');
      }
    }, 1000).unref();
  }
});
