export { EmailOtpModule } from './email-otp.module.js';
