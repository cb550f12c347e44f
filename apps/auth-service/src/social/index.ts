export { SocialModule } from './social.module.js';
