import { serviceMain } from '@slipway/service-kit';
import { AppModule } from './app.module.js';
import { loadWorkerConfig } from './config.js';

serviceMain(
  'build-worker',
  () => loadWorkerConfig(),
  (config) => AppModule.register(config),
);
