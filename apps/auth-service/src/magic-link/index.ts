export { MagicLinkModule } from './magic-link.module.js';
export { MailboxOwnerService, type MailboxSignIn } from './mailbox-owner.service.js';
