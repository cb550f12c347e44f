export { SessionsModule } from './sessions.module.js';
export { SessionsService, sessionView, type CurrentSession } from './sessions.service.js';
