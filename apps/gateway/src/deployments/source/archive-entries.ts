import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import { SourcePathSet, unsafePathReason } from './source-path.js';

/**
 * Turns an archive entry name into a source path, or refuses the whole archive. Only the
 * harmless `./` prefix that `tar -C dir .` writes is removed; anything else unsafe is refused,
 * not repaired.
 */
export class ArchiveEntryPaths {
  private readonly paths = new SourcePathSet();

  constructor(private readonly limits: UploadLimits) {}

  /** The source path of a regular file entry. */
  file(name: string): string {
    const path = this.validate(name.replace(/^(\.\/)+/, ''), name);
    const collision = this.paths.add(path);
    if (collision) throw new ApiException('bad_archive', `The archive entry "${printable(name)}" ${collision}.`);
    return path;
  }

  /** Validates a directory entry (which is not stored: directories follow from file paths). */
  directory(name: string): void {
    const path = name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (path === '' || path === '.') return;
    this.validate(path, name);
  }

  private validate(candidate: string, original: string): string {
    const path = candidate.normalize('NFC');
    const reason = unsafePathReason(path, this.limits);
    if (reason) throw new ApiException('bad_archive', `The archive entry "${printable(original)}" ${reason === 'has a ".." segment' ? 'escapes the root' : reason}.`);
    return path;
  }
}

export function entryRefusal(name: string, what: string): ApiException {
  return new ApiException('bad_archive', `The archive entry "${printable(name)}" is ${what}; only regular files and directories are accepted.`);
}

export function refuseEntry(name: string, what: string): never {
  throw entryRefusal(name, what);
}

/** Names go into error messages: keep them short and free of control characters. */
export function printable(name: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const clean = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
