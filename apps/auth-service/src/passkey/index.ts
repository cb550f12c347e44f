export { PasskeyModule } from './passkey.module.js';
