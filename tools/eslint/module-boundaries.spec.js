import { RuleTester } from 'eslint';
import { fileURLToPath } from 'node:url';
import rule from './module-boundaries.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const options = [
  {
    workspaceRoot: root,
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
    ],
  },
];
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });

// RuleTester declares its own describe/it blocks.
tester.run('module-boundaries', rule, {
  valid: [
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/contract';", options },
    { filename: `${root}apps/gateway/src/a/b.ts`, code: "import { y } from '../config.js';", options },
    { filename: `${root}libs/db/src/index.ts`, code: "import pg from 'pg';", options },
  ],
  invalid: [
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '../../edge/src/config.js';", options, errors: [{ messageId: 'relativeOut' }] },
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/contract/src/ports.js';", options, errors: [{ messageId: 'deep' }] },
    { filename: `${root}apps/gateway/src/main.ts`, code: "import { x } from '@slipway/edge';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}libs/db/src/index.ts`, code: "export * from '@slipway/gateway';", options, errors: [{ messageId: 'tags' }] },
    { filename: `${root}libs/db/src/index.ts`, code: "import x from '@slipway/nope';", options, errors: [{ messageId: 'unknown' }] },
  ],
});
