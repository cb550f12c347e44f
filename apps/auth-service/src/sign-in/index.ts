export { SignInModule } from './sign-in.module.js';
