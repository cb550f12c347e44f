/**
 * The source format shared by the gateway (writer) and the build worker (reader); see README.
 * Every accepted upload is stored as one uncompressed POSIX tar under this key.
 */
export function sourceKey(deploymentId: string): string {
  return `sources/${deploymentId}.tar`;
}

/** The only file modes a source tar holds: executable bit kept, everything else dropped. */
export const SOURCE_FILE_MODE = 0o644;
export const SOURCE_EXECUTABLE_MODE = 0o755;
export const SOURCE_DIRECTORY_MODE = 0o755;

export function sourceFileMode(originalMode: number | undefined): number {
  return originalMode !== undefined && (originalMode & 0o111) !== 0 ? SOURCE_EXECUTABLE_MODE : SOURCE_FILE_MODE;
}
