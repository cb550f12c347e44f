import { PRECOMPRESSED_DIR } from '@slipway/contract';

/** Never served, whatever the release holds: one rule for both data planes (the Node edge's request paths, nginx's static trees). */
export function isForbiddenSegment(segment: string): boolean {
  return segment === '.git' || segment.startsWith('.env') || segment === '.htaccess' || segment === '.DS_Store' || segment === PRECOMPRESSED_DIR;
}
