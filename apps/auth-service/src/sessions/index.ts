export { SessionsModule } from './sessions.module.js';
export { SessionsService, bannedUser, isBanned, sessionView, type CurrentSession } from './sessions.service.js';
export type { SessionRow } from './sessions.repository.js';
