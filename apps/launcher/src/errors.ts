export { StartupError, oneLine, pingPostgres, pingRedis, redactUrl } from '@slipway/service-kit';
