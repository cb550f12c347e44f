import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** Paths that belong to the APIs and health checks, never to the single-page app. */
const NOT_THE_SITE = /^\/(?:api(?:\/|$)|dashboard\/api(?:\/|$)|health(?:\/|$))/;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const MISSING_BUILD = `<!doctype html><meta charset="utf-8"><title>Slipway</title>
<p style="font-family:system-ui,sans-serif;margin:3rem auto;max-width:36rem;line-height:1.5">The dashboard has not been built yet.
Run <code>pnpm nx build dashboard</code> (or <code>pnpm start</code>, which builds everything) and reload this page.
The deployment API is already answering at <a href="/api/v1">/api/v1</a>.</p>`;

/**
 * Serves the built dashboard at `/`: files from DASHBOARD_DIR, and index.html for every other GET
 * so client-side routes survive a reload. Vite's hashed assets are immutable (cached for a year);
 * index.html is revalidated every time so a new build is picked up at once.
 */
@Injectable()
export class DashboardSiteMiddleware implements NestMiddleware {
  private readonly root: string;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.root = resolve(config.DASHBOARD_DIR);
  }

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || NOT_THE_SITE.test(request.path)) return next();
    const file = await this.fileFor(request.path);
    if (file) return this.send(response, file, request.path.startsWith('/assets/'));
    if (extname(request.path) && request.path !== '/index.html') return next();
    const index = await this.fileFor('/index.html');
    if (index) return this.send(response, index, false);
    response.status(200).type('html').setHeader('Cache-Control', 'no-cache');
    response.end(MISSING_BUILD);
  }

  private async fileFor(path: string): Promise<string | null> {
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return null;
    }
    if (decoded.includes('\0')) return null;
    const full = resolve(join(this.root, decoded));
    if (full !== this.root && !full.startsWith(this.root + sep)) return null;
    try {
      return (await stat(full)).isFile() ? full : null;
    } catch {
      return null;
    }
  }

  private send(response: Response, file: string, hashed: boolean): void {
    response.setHeader('Content-Type', TYPES[extname(file)] ?? 'application/octet-stream');
    response.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    if (!hashed)
      response.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    const stream = createReadStream(file);
    stream.on('error', () => response.destroy());
    stream.pipe(response);
  }
}
