import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

interface ExpressApp {
  set(setting: string, value: unknown): void;
  router: { caseSensitive?: boolean; strict?: boolean; stack: { slash?: boolean }[] };
}

/**
 * Better Auth's routes are case-sensitive and exact; so are ours: `/SIGN-IN/EMAIL` and
 * `/sign-in/email/` are not `/sign-in/email`. Express's "case sensitive routing" and "strict
 * routing" are read once, when its router is created, and Nest has created it by the time
 * providers are built, though nothing is registered on it yet: both flags are set on the router
 * itself (each route reads them when it is registered, which Nest does later, in `init`).
 * Startup fails if a path-bound route was registered before, rather than serving other spellings.
 */
@Injectable()
export class StrictRouting {
  constructor(adapterHost: HttpAdapterHost) {
    const express = adapterHost.httpAdapter.getInstance<ExpressApp>();
    express.set('case sensitive routing', true);
    express.set('strict routing', true);
    const router = express.router;
    // Middleware mounted at `/` (`slash`) matches every path whatever the flags; anything else would not follow them.
    if (router.stack.some((layer) => !layer.slash))
      throw new Error('auth-service: routes were registered before case-sensitive, strict routing was switched on');
    router.caseSensitive = true;
    router.strict = true;
  }
}
