import { RuleTester } from 'eslint';
import { fileURLToPath } from 'node:url';
import rule from './module-boundaries.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const options = [
  {
    workspaceRoot: root,
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'], alsoInTests: ['type:test-lib'] },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'], alsoInTests: ['type:test-lib'] },
      { sourceTag: 'type:test-lib', onlyDependOnLibsWithTags: ['type:lib', 'type:test-lib'] },
    ],
  },
];
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });

// RuleTester declares its own describe/it blocks.
tester.run('module-boundaries', rule, {
  valid: [
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/contract';", options },
    { filename: `${root}apps/gateway/src/a/b.ts`, code: "import { y } from '../config.js';", options },
    { filename: `${root}libs/platform-schema/src/index.ts`, code: "import pg from 'pg';", options },
    // Test-only libs in tests: a spec, a file under test/, and one test-only lib using another.
    { filename: `${root}apps/gateway/test/deploy.spec.ts`, code: "import { createTestDatabase } from '@slipway/testing';", options },
    { filename: `${root}apps/gateway/test/support/harness.ts`, code: "import { createTestDatabase } from '@slipway/testing';", options },
    { filename: `${root}libs/blob/src/blob.spec.ts`, code: "import { startS3Emulator } from '@slipway/s3-emulator';", options },
    { filename: `${root}libs/testing/src/deploy-harness.ts`, code: "import { startS3Emulator } from '@slipway/s3-emulator';", options },
  ],
  invalid: [
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '../../edge/src/config.js';", options, errors: [{ messageId: 'relativeOut' }] },
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/contract/src/ports.js';", options, errors: [{ messageId: 'deep' }] },
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/edge';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}libs/platform-schema/src/index.ts`, code: "export * from '@slipway/gateway';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}libs/platform-schema/src/index.ts`, code: "import x from '@slipway/nope';", options, errors: [{ messageId: 'unknown' }] },
    // Test-only libs stay out of runtime code: an app's or a lib's source, a test-looking name that is not one.
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { createTestDatabase } from '@slipway/testing';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}libs/blob/src/index.ts`, code: "export { startS3Emulator } from '@slipway/s3-emulator';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}apps/gateway/src/testing.ts`, code: "const t = await import('@slipway/testing');", options, errors: [{ messageId: 'tags' }] },
  ],
});
