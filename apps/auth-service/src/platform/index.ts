export { KEYRING, PLATFORM_PRISMA, PlatformModule, REDIS } from './platform.module.js';
