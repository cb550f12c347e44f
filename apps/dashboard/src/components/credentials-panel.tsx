import { useState, type FormEvent, type ReactNode } from 'react';
import { api } from '../api/client.js';
import type { Credential } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { formatWhen } from '../format.js';
import { Button, ErrorNotice, Field, Loading, OnceSecret, StatusBadge } from './ui.js';

interface Props {
  /** "API key" / "access token" */
  noun: string;
  basePath: string;
  listField: 'keys' | 'tokens';
  secretField: 'key' | 'token';
  intro: ReactNode;
  empty: ReactNode;
}

/** Project API keys and personal access tokens: create (shown once), rename, rotate, revoke. */
export function CredentialsPanel({ noun, basePath, listField, secretField, intro, empty }: Props) {
  const list = useResource<Record<string, Credential[]>>(basePath);
  const [name, setName] = useState('');
  const [revealed, setRevealed] = useState<{ name: string; value: string } | null>(null);
  const { busy, error, run } = useAction(list.reload);
  const act = (id: string, work: () => Promise<void>) => run(work, id);
  const create = (event: FormEvent) => {
    event.preventDefault();
    void act('new', async () => {
      const made = await api.post<Credential & Record<string, string>>(basePath, { name });
      setRevealed({ name: made.name, value: made[secretField]! });
      setName('');
    });
  };
  const rotate = (c: Credential) =>
    act(c.id, async () => {
      if (!window.confirm(`Rotate “${c.name}”? The current ${noun} stops working at once.`)) return;
      const made = await api.post<Credential & Record<string, string>>(`${basePath}/${c.id}/rotate`);
      setRevealed({ name: made.name, value: made[secretField]! });
    });
  const revoke = (c: Credential) =>
    act(c.id, async () => {
      if (!window.confirm(`Revoke “${c.name}”? Anything using it stops working at once.`)) return;
      await api.delete(`${basePath}/${c.id}`);
    });
  const rename = (c: Credential) =>
    act(c.id, async () => {
      const next = window.prompt(`New name for “${c.name}”`, c.name);
      if (next && next.trim() && next !== c.name) await api.patch(`${basePath}/${c.id}`, { name: next });
    });

  const items = list.data?.[listField] ?? [];
  return (
    <div className="stack">
      <div className="card">
        {intro}
        <form className="inline-form" onSubmit={create}>
          <Field
            label={`Name of the new ${noun}`}
            name="credential-name"
            required
            maxLength={100}
            placeholder="e.g. GitHub Actions"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <Button type="submit" busy={busy === 'new'}>
            Create {noun}
          </Button>
        </form>
        {revealed ? <OnceSecret title={`Your new ${noun} “${revealed.name}”.`} value={revealed.value} onDone={() => setRevealed(null)} /> : null}
      </div>
      <ErrorNotice error={error ?? list.error} />
      {list.loading ? <Loading what={`${noun}s`} /> : null}
      {!list.loading && items.length === 0 ? <div className="empty card">{empty}</div> : null}
      {items.length > 0 ? (
        <div className="table-wrap card">
          <table>
            <caption className="visually-hidden">{noun}s</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
                <tr key={c.id} className={c.revokedAt ? 'revoked' : undefined}>
                  <td data-label="Name">
                    {c.name} {c.revokedAt ? <StatusBadge status="revoked" /> : null}
                  </td>
                  <td data-label="Prefix" className="mono">
                    {c.prefix}…
                  </td>
                  <td data-label="Created">{formatWhen(c.createdAt)}</td>
                  <td data-label="Last used">{formatWhen(c.lastUsedAt)}</td>
                  <td className="row-actions">
                    {c.revokedAt ? null : (
                      <>
                        <Button type="button" variant="ghost" disabled={busy === c.id} onClick={() => void rename(c)} aria-label={`Rename ${c.name}`}>
                          Rename
                        </Button>
                        <Button type="button" variant="secondary" disabled={busy === c.id} onClick={() => void rotate(c)} aria-label={`Rotate ${c.name}`}>
                          Rotate
                        </Button>
                        <Button type="button" variant="danger" disabled={busy === c.id} onClick={() => void revoke(c)} aria-label={`Revoke ${c.name}`}>
                          Revoke
                        </Button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}
