/**
 * The whole platform as `pnpm start` runs it (libs/testing's LaunchedPlatform: the built launcher),
 * on free ports, its own Redis and home, and its own database on the machine's Postgres.
 */
import { LaunchedPlatform } from '@slipway/testing';

export { ROOT } from '@slipway/testing';
export type { CliResult, HttpResult, PlatformAccount as Account } from '@slipway/testing';

export type Platform = LaunchedPlatform;
export const Platform = {
  /** `env`: further variables for the launcher (and so every service), e.g. SLIPWAY_DNS_SERVERS. */
  start(label: string, env: Record<string, string> = {}): Promise<LaunchedPlatform> {
    return LaunchedPlatform.start(label, {
      suite: 'e2e',
      database: 'test-server',
      // Owners stay on the CLI's default plan; sign-in's public address by IP, as the specs expect it.
      plan: null,
      env: (ports) => ({ AUTH_PUBLIC_URL: `http://127.0.0.1:${ports.auth}`, ...env }),
    });
  },
};
