/**
 * The platform as `pnpm start` runs it: shared with the framework suite through libs/testing.
 * The hostile suite runs it with HTTPS on (`EDGE_HTTPS=acme`), so that SLIPWAY_HOME holds the ACME
 * account key and the certificate directory the tenant must not reach (files check). `*.localhost`
 * never gets a certificate, so the (unreachable) ACME server is never asked anything.
 */
import { freePort, LaunchedPlatform, type LaunchOptions } from '@slipway/testing';

export type {
  CliResult,
  HttpResult,
  PlatformAccount as Account,
  PlatformPorts as Ports,
  PlatformRuntimeFile as RuntimeFile,
  PlatformTask as Task,
} from '@slipway/testing';

export type HostilePlatform = LaunchedPlatform;
export const HostilePlatform = {
  async start(label: string, options: LaunchOptions = {}): Promise<LaunchedPlatform> {
    const https = await freePort();
    return LaunchedPlatform.start(label, {
      ...options,
      env: { EDGE_HTTPS: 'acme', EDGE_HTTPS_PORT: String(https), ACME_DIRECTORY_URL: 'https://127.0.0.1:9/directory', ...options.env },
    });
  },
};
