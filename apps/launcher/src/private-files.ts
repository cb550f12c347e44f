import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { StartupError } from './errors.js';

/**
 * A directory only the launcher's user can enter (0700), also when an older version made it with
 * looser bits: `mkdir`'s mode applies only to a directory it creates.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/**
 * Replaces `file` with `text`, mode 0600 from the first byte: written to a fresh file created with
 * that mode (O_EXCL), then renamed over the old one, so no reader ever sees it with looser bits
 * or half written (`writeFile`'s mode would not apply to a file that already exists).
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The secret kept in `file` (0600), generated on first use: `bytes` random bytes as base64url. */
export async function ensureSecretFile(file: string, bytes: number): Promise<string> {
  if (!existsSync(file)) await writeFile(file, randomBytes(bytes).toString('base64url'), { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  const secret = (await readFile(file, 'utf8')).trim();
  if (!secret) throw new StartupError(`${file} is empty; delete it so a new secret is generated`);
  return secret;
}
