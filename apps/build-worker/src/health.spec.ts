import { describeServiceHealth } from '@slipway/testing';
import { AppModule } from './app.module.js';
import { loadWorkerConfig } from './config.js';

// consume: false — health only; no BullMQ consumer in this suite.
describeServiceHealth('build-worker', (env) => AppModule.register(loadWorkerConfig(env), { consume: false }));
