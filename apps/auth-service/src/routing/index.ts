export { canonicalPath } from './canonical-path.js';
export { RoutingModule } from './routing.module.js';
