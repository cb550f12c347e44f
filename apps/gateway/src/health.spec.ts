import { describeServiceHealth } from '@slipway/testing';
import { AppModule } from './app.module.js';
import { loadGatewayConfig } from './config.js';

describeServiceHealth('gateway', (env) => AppModule.register(loadGatewayConfig(env)));
