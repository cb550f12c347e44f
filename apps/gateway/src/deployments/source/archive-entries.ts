import { SourceLinks, linkTargetProblem, type UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
import { SourcePathSet, unsafePathReason, type SourceEntryKind } from './source-path.js';

/**
 * Turns an archive entry name into a source path, or refuses the whole archive. Only the
 * harmless `./` prefix that `tar -C dir .` writes is removed; anything else unsafe is refused,
 * not repaired. Symbolic links are kept when they stay inside the project (libs/contract
 * `source-links.ts`): their targets are checked as they come, where they lead once every entry
 * is known (`checkLinks`: a link may name an entry that comes later).
 */
export class ArchiveEntryPaths {
  private readonly paths = new SourcePathSet();
  /** Source path → target, for every link entry. */
  private readonly links = new Map<string, string>();
  /** Source path → the entry's name as the archive spelled it, for messages. */
  private readonly linkNames = new Map<string, string>();

  constructor(private readonly limits: UploadLimits) {}

  /** The source path of a regular file entry. */
  file(name: string): string {
    return this.entry(name, 'file');
  }

  /**
   * The source path and target of a symbolic link entry. Refused at once: an unsafe name, an
   * empty, absolute or unprintable target, a link below another link or file (or one that
   * would have files below it).
   */
  link(name: string, rawTarget: string): { path: string; target: string } {
    const path = this.entry(name, 'link');
    const target = rawTarget.normalize('NFC');
    const problem = linkTargetProblem(target, this.limits);
    if (problem)
      throw new ApiException(
        'bad_archive',
        `The archive entry "${printable(name)}" is a symbolic link that ${problem} (${JSON.stringify(printable(target))}); only relative links that stay inside the project are accepted.`,
      );
    this.links.set(path, target);
    this.linkNames.set(path, name);
    return { path, target };
  }

  /** Validates a directory entry (which is not stored: directories follow from file paths). */
  directory(name: string): void {
    const path = name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (path === '' || path === '.') return;
    const collision = this.paths.addDirectory(this.validate(path, name));
    if (collision) throw new ApiException('bad_archive', `The archive entry "${printable(name)}" ${collision}.`);
  }

  /**
   * Once every entry is known: each link, followed hop by hop through the archive's other links,
   * must stay inside the project and not loop. Throws `bad_archive` naming the first that does not.
   */
  checkLinks(): void {
    const links = new SourceLinks(this.links, this.limits);
    for (const path of this.links.keys()) {
      const problem = links.problem(path);
      if (problem)
        throw new ApiException(
          'bad_archive',
          `The archive entry "${printable(this.linkNames.get(path)!)}" ${problem}; only relative links that stay inside the project are accepted.`,
        );
    }
  }

  private entry(name: string, kind: SourceEntryKind): string {
    const path = this.validate(name.replace(/^(\.\/)+/, ''), name);
    const collision = this.paths.add(path, kind);
    if (collision) throw new ApiException('bad_archive', `The archive entry "${printable(name)}" ${collision}.`);
    return path;
  }

  private validate(candidate: string, original: string): string {
    const path = candidate.normalize('NFC');
    const reason = unsafePathReason(path, this.limits);
    if (reason)
      throw new ApiException('bad_archive', `The archive entry "${printable(original)}" ${reason === 'has a ".." segment' ? 'escapes the root' : reason}.`);
    return path;
  }
}

export function entryRefusal(name: string, what: string): ApiException {
  return new ApiException(
    'bad_archive',
    `The archive entry "${printable(name)}" is ${what}; only regular files, directories and relative symbolic links that stay inside the project are accepted.`,
  );
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
