import type { Finding } from '../api/types.js';
import { CopyButton } from './ui.js';

const TONE: Record<string, 'danger' | 'warning' | 'info'> = {
  critical: 'danger',
  high: 'danger',
  error: 'danger',
  medium: 'warning',
  warning: 'warning',
  low: 'info',
  info: 'info',
};

/** One warning or hazard as a readable card: severity colour, message, the file it concerns. */
export function FindingCard({ finding, kind }: { finding: Finding; kind: 'warning' | 'hazard' }) {
  const severity = typeof finding.severity === 'string' ? finding.severity : kind === 'hazard' ? 'high' : 'warning';
  const tone = TONE[severity] ?? (kind === 'hazard' ? 'danger' : 'warning');
  const file = typeof finding.path === 'string' ? finding.path : typeof finding.file === 'string' ? finding.file : null;
  const line = typeof finding.line === 'number' ? finding.line : null;
  const detail = typeof finding.detail === 'string' ? finding.detail : typeof finding.hint === 'string' ? finding.hint : null;
  const location = file ? `${file}${line ? `:${line}` : ''}` : null;
  return (
    <article className={`finding finding-${tone}`} aria-label={`${kind}: ${finding.code}`}>
      <header>
        <span className={`badge badge-${tone === 'info' ? 'neutral' : tone}`}>{kind === 'hazard' ? `${severity} hazard` : 'warning'}</span>
        <code className="finding-code">{finding.code}</code>
      </header>
      <p>{finding.message}</p>
      {detail ? <p className="muted">{detail}</p> : null}
      {location ? (
        <p className="finding-file">
          <span className="muted">in</span> <code title="The file this concerns, relative to the uploaded folder">{location}</code>
          <CopyButton value={location} label="Copy path" />
        </p>
      ) : null}
    </article>
  );
}
