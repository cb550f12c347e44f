import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import rule from './redis-via-messaging.js';

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' } });

tester.run('redis-via-messaging', rule, {
  valid: [
    // The type of a connection, and the connection from the lib.
    { code: "import type { Redis } from 'ioredis'; let r: Redis;" },
    { code: "import { type Redis, type RedisOptions } from 'ioredis';" },
    { code: "import { redisConnection } from '@slipway/messaging'; const r = redisConnection(url, 'subscriber');" },
    // Other constructors; ioredis's helpers that are not connections.
    { code: "const queue = new Queue('deploy', { connection });" },
    { code: "import { ReplyError } from 'ioredis';" },
  ],
  invalid: [
    {
      code: "import { Redis } from 'ioredis'; const r = new Redis(url, { maxRetriesPerRequest: null });",
      errors: [{ messageId: 'import' }, { messageId: 'construct', data: { what: 'Redis' } }],
    },
    {
      code: "import IORedis from 'ioredis'; new IORedis(url);",
      errors: [
        { messageId: 'import', data: { what: 'default' } },
        { messageId: 'construct', data: { what: 'IORedis' } },
      ],
    },
    {
      code: "import * as ioredis from 'ioredis'; new ioredis.Redis(url);",
      errors: [{ messageId: 'import' }, { messageId: 'construct', data: { what: 'Redis' } }],
    },
    { code: "import { Cluster } from 'ioredis';", errors: [{ messageId: 'import', data: { what: 'Cluster' } }] },
    // Without the import in sight (a re-export from elsewhere): the constructor's name is enough.
    { code: 'const r = new Redis(url);', errors: [{ messageId: 'construct' }] },
  ],
});
