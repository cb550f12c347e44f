import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A file's digest, streamed (Node binaries are ~100 MB). */
export async function fileHash(file: string, algorithm = 'sha256'): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Seals a toolchain made in the private directory `tmp` (its marker written, readable and runnable
 * by every user, writable by the owner only) and renames it to `dir`, so concurrent deploys never
 * see half of one. `'raced'`: another deploy placed the same version first — the caller checks that
 * copy is whole before using it.
 */
export async function placeToolchain(tmp: string, dir: string, markerName: string, marker: unknown): Promise<'placed' | 'raced'> {
  await writeFile(join(tmp, markerName), `${JSON.stringify(marker, null, 2)}\n`);
  await run('chmod', ['-R', 'u+rwX,go=rX,go-w', tmp]);
  await chmod(tmp, 0o755);
  try {
    await rename(tmp, dir);
    return 'placed';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
    return 'raced';
  }
}
