export { SignUpModule } from './sign-up.module.js';
