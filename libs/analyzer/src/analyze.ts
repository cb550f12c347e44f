import { detectProject } from './detect-spec.js';
import { declaredNodeVersion, engineMismatch } from './node-version.js';
import { sourceFindings } from './source-findings.js';
import { filesUnder } from './workspaces.js';
import type { AnalyzeContext, ProjectFile, SourceAnalysis } from './types.js';

/** The analyze step: spec, plus the warnings and hazards visible in the source. Pure. */
export function analyzeSource(files: ProjectFile[], context: AnalyzeContext): SourceAnalysis {
  const { spec: detected, warnings } = detectProject(files, { rootDirectory: context.rootDirectory ?? null });
  // The exact version is the build worker's to choose (it may need the registry); until then, null.
  const runsNode = Boolean(detected.commands.install || detected.commands.build || detected.commands.start);
  // A monorepo's application may declare its own Node; else the top level's declaration counts.
  const own = detected.rootDirectory ? filesUnder(files, detected.rootDirectory) : files;
  const request = runsNode ? (declaredNodeVersion(own) ?? (own !== files ? declaredNodeVersion(files) : null)) : null;
  const spec = { ...detected, nodeVersion: null, nodeVersionRequest: request };
  const findings = sourceFindings(files, spec, context);
  const mismatch = engineMismatch(own !== files && declaredNodeVersion(own) === null ? files : own, request);
  return { spec, warnings: [...warnings, ...findings.warnings, ...(mismatch ? [mismatch] : [])], hazards: findings.hazards };
}
