// Public face of dashboard-site/: what other folders of the gateway use (eslint `slipway/feature-folders`).
// The built dashboard (static files + SPA fallback) at `/`.
export { DashboardSiteModule } from './dashboard-site.module.js';
