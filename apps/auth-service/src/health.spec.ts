import { describeServiceHealth } from '@slipway/testing';
import { AppModule } from './app.module.js';
import { loadAuthConfig } from './config.js';

describeServiceHealth('auth-service', (env) => AppModule.register(loadAuthConfig(env)));
