import type { OutboxEmail } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { ErrorNotice, Loading, StatusBadge } from '../components/ui.js';
import { formatWhen } from '../format.js';

/** Emails the sign-in service sent (or holds in the development outbox): reset and verification links. */
export function SignInEmails({ appId }: { appId: string }) {
  const emails = useResource<{ emails: OutboxEmail[] }>(`/applications/${appId}/sign-in/emails`);
  return (
    <div className="card">
      <h2>Outbox</h2>
      <ErrorNotice error={emails.error} />
      {emails.loading ? <Loading what="emails" /> : null}
      {emails.data && emails.data.emails.length === 0 ? <p className="muted">No emails yet. Password reset and verification emails appear here.</p> : null}
      <ul className="plain-list">
        {emails.data?.emails.map((e) => (
          <li key={e.id}>
            <details>
              <summary>
                <StatusBadge status={e.status} /> <strong>{e.subject}</strong> to <span className="mono">{e.toAddress}</span> · {formatWhen(e.createdAt)}
              </summary>
              <pre className="code-inline">{e.textBody}</pre>
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}
