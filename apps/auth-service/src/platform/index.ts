export { KEYRING, PlatformModule, REDIS } from './platform.module.js';
