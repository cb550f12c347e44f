import type { Domain } from '../api/types.js';
import { Button, CopyButton } from './ui.js';

/**
 * One claimed domain: its verification state, the exact TXT record to publish (name, type,
 * value, each copyable), the last check's problem, and — once verified — the trusted origins it
 * added. Verify looks the record up now; on a verified domain it re-checks it.
 */
export function DomainCard({
  domain,
  busy,
  verifying,
  onVerify,
  onRemove,
}: {
  domain: Domain;
  busy: boolean;
  verifying: boolean;
  onVerify(): void;
  onRemove(): void;
}) {
  const verified = domain.status === 'verified';
  const rows: [string, string][] = [
    ['Name', domain.record.name],
    ['Type', domain.record.type],
    ['Value', domain.record.value],
  ];
  return (
    <li className="card domain-item" aria-label={`Domain ${domain.hostname}`}>
      <div className="domain-body">
        <h3 className="mono">
          {domain.displayName}
          {domain.displayName !== domain.hostname ? <span className="muted"> ({domain.hostname})</span> : null}{' '}
          <span className={`badge badge-${verified ? 'success' : 'warning'}`}>{verified ? 'Verified' : 'Pending verification'}</span>
        </h3>
        {verified ? null : (
          <p className="muted">
            Prove you control this domain: add this DNS record at your DNS provider, then press Verify. Until it is verified the domain is not served and the
            sign-in service does not trust it.
          </p>
        )}
        <table className="dns-record" aria-label={`DNS record for ${domain.hostname}`}>
          <tbody>
            {rows.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td className="mono">{value}</td>
                <td className="row-actions">{label === 'Type' ? null : <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {domain.checkError ? (
          <p className="notice notice-danger" role="status">
            Last check: {domain.checkError}
          </p>
        ) : null}
        {verified ? (
          <>
            <p className="muted">Trusted origins it added:</p>
            <ul className="chips" aria-label={`Trusted origins of ${domain.hostname}`}>
              {domain.trustedOrigins.map((o) => (
                <li key={o} className="chip mono">
                  {o}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
      <div className="domain-actions">
        <Button
          type="button"
          variant={verified ? 'secondary' : 'primary'}
          busy={verifying}
          disabled={busy}
          onClick={onVerify}
          aria-label={`${verified ? 'Re-check' : 'Verify'} ${domain.hostname}`}
        >
          {verified ? 'Re-check' : 'Verify'}
        </Button>
        <Button type="button" variant="danger" disabled={busy} onClick={onRemove} aria-label={`Remove ${domain.hostname}`}>
          Remove
        </Button>
      </div>
    </li>
  );
}
