export { UsersModule } from './users.module.js';
export { UsersRepository, userView, type SocialProfile, type UserRow } from './users.repository.js';
