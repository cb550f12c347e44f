import { RuleTester } from 'eslint';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import rule from './feature-folders.js';

// A source root on disk (the circle check reads the other folders' files):
// sessions → tokens → users; update-user → sessions; users → tokens would close a circle.
const root = mkdtempSync(join(tmpdir(), 'feature-folders-'));
const files = {
  'app.module.ts': "import { SessionsModule } from './sessions/index.js';",
  'config.ts': '',
  'common/index.ts': "export { newId } from './ids.js';",
  'common/ids.ts': '',
  'users/index.ts': "export { UsersRepository } from './users.repository.js';",
  'users/users.repository.ts': "import { newId } from '../common/index.js';",
  'tokens/index.ts': "export { TokensService } from './tokens.service.js';",
  'tokens/tokens.service.ts': "import type { UserRow } from '../users/index.js';",
  'sessions/index.ts': "export { SessionsService } from './sessions.service.js';",
  'sessions/sessions.service.ts': "import { TokensService } from '../tokens/index.js';\nimport { AUTH_CONFIG } from '../config.js';",
  'update-user/update-user.service.ts': "import { SessionsService } from '../sessions/index.js';",
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}
const options = [{ root }];
const at = (path) => join(root, path);
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });

// RuleTester declares its own describe/it blocks.
tester.run('feature-folders', rule, {
  valid: [
    { filename: at('sessions/sessions.service.ts'), code: files['sessions/sessions.service.ts'], options },
    { filename: at('sessions/sessions.module.ts'), code: "import { SessionsService } from './sessions.service.js';", options },
    { filename: at('update-user/update-user.service.ts'), code: "import { SessionsService } from '../sessions/index.js';", options },
    { filename: at('app.module.ts'), code: "import { SessionsModule } from './sessions/index.js';", options },
    { filename: at('sessions/dto/x.dto.ts'), code: "import { newId } from '../../common/index.js';", options },
    { filename: at('users/users.repository.ts'), code: "import pg from 'pg';", options },
    { filename: '/elsewhere/x.ts', code: "import { x } from '../sessions/sessions.service.js';", options },
  ],
  invalid: [
    {
      filename: at('update-user/update-user.service.ts'),
      code: "import { SessionsService } from '../sessions/sessions.service.js';",
      options,
      errors: [{ messageId: 'internals' }],
    },
    { filename: at('app.module.ts'), code: "import { SessionsModule } from './sessions/sessions.module.js';", options, errors: [{ messageId: 'internals' }] },
    { filename: at('tokens/tokens.service.ts'), code: "export * from '../users/users.repository.js';", options, errors: [{ messageId: 'internals' }] },
    { filename: at('sessions/dto/x.dto.ts'), code: "import { newId } from '../../common/ids.js';", options, errors: [{ messageId: 'internals' }] },
    { filename: at('users/users.repository.ts'), code: "import { TokensService } from '../tokens/index.js';", options, errors: [{ messageId: 'circle' }] },
    { filename: at('tokens/tokens.service.ts'), code: "const m = await import('../update-user/index.js');", options, errors: [{ messageId: 'circle' }] },
  ],
});
