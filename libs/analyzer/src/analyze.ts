import { detectProject } from './detect-spec.js';
import { sourceFindings } from './source-findings.js';
import type { AnalyzeContext, ProjectFile, SourceAnalysis } from './types.js';

/** The analyze step: spec, plus the warnings and hazards visible in the source. Pure. */
export function analyzeSource(files: ProjectFile[], context: AnalyzeContext): SourceAnalysis {
  const { spec, warnings } = detectProject(files);
  const findings = sourceFindings(files, spec, context);
  return { spec, warnings: [...warnings, ...findings.warnings], hazards: findings.hazards };
}
