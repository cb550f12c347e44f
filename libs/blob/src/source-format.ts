/**
 * The source format shared by the gateway (writer) and the build worker (reader); see README.
 * Every accepted upload is stored as one gzip-compressed POSIX tar under this key: a source that
 * unpacks to hundreds of MiB (an upload that compresses well) must not be stored at that size.
 */
export function sourceKey(deploymentId: string): string {
  return `sources/${deploymentId}.tar.gz`;
}

/**
 * gzip level of stored sources: the fastest. The gateway compresses while the upload arrives
 * (and after it, for `files` uploads), on the accept path; level 1 holds ~230:1 on runs of zeros
 * and close to level 6 on text, at about half its CPU.
 */
export const SOURCE_GZIP_LEVEL = 1;

/** Sources stored before they were compressed (`.tar`) are still read: the reader sniffs gzip's magic bytes. */
export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** The only file modes a source tar holds: executable bit kept, everything else dropped. */
export const SOURCE_FILE_MODE = 0o644;
export const SOURCE_EXECUTABLE_MODE = 0o755;
export const SOURCE_DIRECTORY_MODE = 0o755;
/** Mode of a symbolic link entry (what `ln -s` makes; Linux ignores a link's own mode). */
export const SOURCE_LINK_MODE = 0o777;

export function sourceFileMode(originalMode: number | undefined): number {
  return originalMode !== undefined && (originalMode & 0o111) !== 0 ? SOURCE_EXECUTABLE_MODE : SOURCE_FILE_MODE;
}
