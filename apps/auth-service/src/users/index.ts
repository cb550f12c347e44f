export { UsersModule } from './users.module.js';
export { USER_COLUMNS, UsersRepository, userColumns, userView, type SocialProfile, type UserRow } from './users.repository.js';
