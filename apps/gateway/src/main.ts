import { serviceMain } from '@slipway/server';
import { AppModule } from './app.module.js';
import { loadGatewayConfig } from './config.js';

serviceMain('gateway', () => loadGatewayConfig(), (config) => AppModule.register(config));
