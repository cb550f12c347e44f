export { UpdateUserModule } from './update-user.module.js';
