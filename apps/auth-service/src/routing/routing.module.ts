import { Module } from '@nestjs/common';
import { NotFoundController } from './not-found.controller.js';
import { StrictRouting } from './strict-routing.js';

/**
 * One spelling per path: case-sensitive, strict routing (StrictRouting, built with the providers,
 * before Nest registers any route) and Better Auth's 404 for every other path under `/a/{slug}`.
 * Imported last by AppModule, so its catch-all route comes after every feature's.
 */
@Module({ controllers: [NotFoundController], providers: [StrictRouting] })
export class RoutingModule {}
