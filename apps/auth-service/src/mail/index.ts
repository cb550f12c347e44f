export { MailModule } from './mail.module.js';
export { MailerService, type OutgoingEmail } from './mailer.service.js';
