/**
 * Issue 33: every sign-in plugin used through Better Auth's own client plugins, against the
 * platform as `pnpm start` runs it. One platform for all of them (starting one takes a while);
 * each plugin's tests live in `sign-in-plugins/{plugin}.ts` as a function of the shared context.
 */
import { adminTests } from './sign-in-plugins/admin.js';
import { emailCodeTests } from './sign-in-plugins/email-codes.js';
import { genericOidcTests } from './sign-in-plugins/generic-oidc.js';
import { organizationTests } from './sign-in-plugins/organization.js';
import { passkeyTests } from './sign-in-plugins/passkey.js';
import { startPluginsContext, type SharedContext } from './sign-in-plugins/context.js';
import { switchTests } from './sign-in-plugins/switches.js';
import { twoFactorTests } from './sign-in-plugins/two-factor.js';

describe('sign-in plugins, with Better Auth’s own client plugins, on the platform as `pnpm start` runs it', () => {
  const shared = {} as SharedContext;
  beforeAll(async () => {
    shared.current = await startPluginsContext('e2e-plugins');
  }, 240_000);
  afterAll(async () => {
    await shared.current?.platform.stop();
  });

  switchTests(shared);
  emailCodeTests(shared);
  passkeyTests(shared);
  twoFactorTests(shared);
  genericOidcTests(shared);
  adminTests(shared);
  organizationTests(shared);
});
