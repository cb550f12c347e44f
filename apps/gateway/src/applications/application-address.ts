import type { GatewayConfig } from '../config.js';

/** Where a released application answers: `{APPS_SCHEME}://{slug}.{first APPS_DOMAIN}`. */
export function applicationUrl(config: GatewayConfig, slug: string): string {
  return `${config.APPS_SCHEME}://${slug}.${config.APPS_DOMAIN[0]}`;
}
