export { GenericOAuthModule } from './generic-oauth.module.js';
