/**
 * Issue 33: every sign-in plugin used through Better Auth's own client plugins, against the
 * platform as `pnpm start` runs it. One platform for all of them (starting one takes a while);
 * each plugin's tests live in `sign-in-plugins/{plugin}.ts` as a function of the shared context.
 */
import { startPluginsContext, type PluginsContext } from './sign-in-plugins/context.js';
import { organizationTests } from './sign-in-plugins/organization.js';
import { switchTests } from './sign-in-plugins/switches.js';

export type SharedContext = { current: PluginsContext };

describe('sign-in plugins, with Better Auth’s own client plugins, on the platform as `pnpm start` runs it', () => {
  const shared = {} as SharedContext;
  beforeAll(async () => {
    shared.current = await startPluginsContext('e2e-plugins');
  }, 240_000);
  afterAll(async () => {
    await shared.current?.platform.stop();
  });

  switchTests(shared);
  organizationTests(shared);
});
