export { OrganizationModule } from './organization.module.js';
