import { serviceMain } from '@slipway/service-kit';
import { AppModule } from './app.module.js';
import { loadAuthConfig } from './config.js';

serviceMain(
  'auth-service',
  () => loadAuthConfig(),
  (config) => AppModule.register(config),
);
