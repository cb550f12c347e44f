export { StartupError, oneLine, pingPostgres, pingRedis, redactUrl } from '@slipway/server';
