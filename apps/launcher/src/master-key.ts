import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StartupError } from './errors.js';

/** SLIPWAY_MASTER_KEY when given; otherwise one generated on first start and kept in `.slipway/master.key` (0600). */
export async function resolveMasterKey(home: string, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) {
    if (Buffer.from(fromEnv, 'base64').length !== 32)
      throw new StartupError('SLIPWAY_MASTER_KEY: must be 32 bytes encoded as base64 (`openssl rand -base64 32`)');
    return fromEnv;
  }
  const file = join(home, 'master.key');
  if (!existsSync(file)) await writeFile(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return (await readFile(file, 'utf8')).trim();
}
