/** The platform as `pnpm start` runs it: shared with the framework suite through libs/testing. */
export {
  LaunchedPlatform as HostilePlatform,
  type CliResult,
  type HttpResult,
  type PlatformAccount as Account,
  type PlatformPorts as Ports,
  type PlatformRuntimeFile as RuntimeFile,
  type PlatformTask as Task,
} from '@slipway/testing';
