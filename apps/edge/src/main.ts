import { serviceMain } from '@slipway/server';
import { AppModule } from './app.module.js';
import { loadEdgeConfig } from './config.js';

serviceMain('edge', () => loadEdgeConfig(), (config) => AppModule.register(config));
