import 'reflect-metadata';
import { Logger, type INestApplication, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError } from '@slipway/config';
import { AllExceptionsFilter } from './all-exceptions.filter.js';
import { StartupError, oneLine, waitForDependencies } from './dependencies.js';
import { inheritedListenFds } from './listen-fds.js';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

export function logLevelsFrom(level: string): LogLevel[] {
  const index = LEVELS.indexOf(level as LogLevel);
  return LEVELS.slice(0, index < 0 ? 4 : index + 1);
}

export interface HttpAppOptions {
  name: string;
  module: unknown;
  port: number;
  host: string;
  /**
   * A listening socket handed down by the supervisor (`SLIPWAY_LISTEN_FDS=http=3`): the app
   * accepts on it instead of binding `host:port`, so its siblings on the same socket and the
   * connections waiting in its backlog outlive this process.
   */
  listenFd?: number | undefined;
  logLevel: string;
  /** Public base URL used in error `documentation` links. */
  baseUrl: string;
  configure?: (app: INestApplication) => void | Promise<void>;
  /**
   * `false`: the caller handles SIGTERM/SIGINT itself (a node:cluster worker, which must stop
   * once however many signals and shutdown messages reach it). Default: Nest's shutdown hooks.
   */
  shutdownHooks?: boolean;
}

/** Creates, configures and starts a NestJS HTTP app with shutdown hooks and the error filter. */
export async function startHttpApp(options: HttpAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create(options.module as never, { logger: logLevelsFrom(options.logLevel), abortOnError: false });
  if (options.shutdownHooks !== false) app.enableShutdownHooks();
  app.useGlobalFilters(new AllExceptionsFilter(options.baseUrl));
  const express = app.getHttpAdapter().getInstance() as { disable(setting: string): void; set(setting: string, value: unknown): void };
  express.disable('x-powered-by');
  await options.configure?.(app);
  if (options.listenFd === undefined) {
    await app.listen(options.port, options.host);
    new Logger(options.name).log(`listening on http://${options.host}:${options.port}`);
  } else {
    // Express's adapter passes the first argument to http.Server#listen, which takes a handle
    // (`{fd}`) as well as a port; Nest's type only names the port.
    await app.listen({ fd: options.listenFd } as unknown as number);
    new Logger(options.name).log(`listening on the inherited socket (fd ${options.listenFd}) for http://${options.host}:${options.port}`);
  }
  return app;
}

/**
 * Runs a process's main function. A configuration or startup problem is printed as one line,
 * `<name>: cannot start: <reason>`, and the process exits 1 — no stack trace.
 */
export function runMain(name: string, main: () => Promise<unknown>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof StartupError) {
      process.stderr.write(`${name}: cannot start: ${error.message}\n`);
    } else {
      process.stderr.write(`${name}: cannot start: ${oneLine(error)}\n`);
      if (process.env['SLIPWAY_DEBUG']) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
    }
    process.exit(1);
  });
}

export interface ServiceConfig {
  DATABASE_URL: string;
  REDIS_URL: string;
  HOST: string;
  PORT: number;
  LOG_LEVEL: string;
  STARTUP_TIMEOUT_MS: number;
  PUBLIC_URL: string;
  SLIPWAY_LAUNCHER_PID?: number | undefined;
  SLIPWAY_LISTEN_FDS?: string | undefined;
}

/** The descriptor of the inherited `http` socket (`SLIPWAY_LISTEN_FDS=http=3`), if the supervisor handed one down. */
export function inheritedHttpFd(config: Pick<ServiceConfig, 'SLIPWAY_LISTEN_FDS'>): number | undefined {
  return inheritedListenFds({ SLIPWAY_LISTEN_FDS: config.SLIPWAY_LISTEN_FDS }).get('http');
}

/**
 * The whole `main.ts` of a platform service: validate config, wait for Postgres and Redis, then
 * serve `module` (which must import HealthModule). Exits with one line on bad config.
 */
export function serviceMain<C extends ServiceConfig>(name: string, loadConfig: () => C, module: (config: C) => unknown): void {
  runMain(name, async () => {
    const config = loadConfig();
    if (config.SLIPWAY_LAUNCHER_PID) exitWithParent(name, config.SLIPWAY_LAUNCHER_PID);
    await waitForDependencies({ postgresUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL }, config.STARTUP_TIMEOUT_MS);
    await startHttpApp({
      name,
      module: module(config),
      port: config.PORT,
      host: config.HOST,
      listenFd: inheritedHttpFd(config),
      logLevel: config.LOG_LEVEL,
      baseUrl: config.PUBLIC_URL,
    });
  });
}

/** Exits (via SIGTERM, so shutdown hooks run) when the launcher that started this process is gone. */
export function exitWithParent(name: string, parentPid: number): void {
  const timer = setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      clearInterval(timer);
      new Logger(name).warn(`launcher ${parentPid} is gone; shutting down`);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 1000);
  timer.unref();
}
