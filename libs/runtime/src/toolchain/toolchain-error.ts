/** Why a project's Node.js cannot be provided; `code` is the deployment's `error.code`. */
export class ToolchainError extends Error {
  override readonly name = 'ToolchainError';
  constructor(
    readonly code: 'node_version_unsupported' | 'node_unavailable',
    message: string,
  ) {
    super(message);
  }
}
