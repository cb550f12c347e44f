/** Why a project's Node.js or package manager cannot be provided; `code` is the deployment's `error.code`. */
export class ToolchainError extends Error {
  override readonly name = 'ToolchainError';
  constructor(
    readonly code: 'node_version_unsupported' | 'node_unavailable' | 'package_manager_unavailable',
    message: string,
  ) {
    super(message);
  }
}
