import { Fragment, useState } from 'react';
import { api } from '../api/client.js';
import type { SignInUser } from '../api/types.js';
import { useAction } from '../api/use-action.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Field, Loading } from '../components/ui.js';
import { formatWhen } from '../format.js';

/** How long a ban from the dashboard lasts (Better Auth's `banExpiresIn`, seconds; none: for ever). */
const BAN_LENGTHS: { label: string; seconds?: number }[] = [
  { label: 'for ever' },
  { label: '1 day', seconds: 86_400 },
  { label: '7 days', seconds: 604_800 },
  { label: '30 days', seconds: 2_592_000 },
];

export function SignInUsers({ appId }: { appId: string }) {
  const [search, setSearch] = useState('');
  const users = useResource<{ total: number; users: SignInUser[] }>(`/applications/${appId}/sign-in/users?search=${encodeURIComponent(search)}`);
  const action = useAction(users.reload);
  const busy = action.busy !== null;
  const userPath = (u: SignInUser, what: string) => `/applications/${appId}/sign-in/users/${encodeURIComponent(u.id)}/${what}`;
  const [banning, setBanning] = useState<{ id: string; reason: string; length: number } | null>(null);
  const ban = (u: SignInUser) => {
    if (!banning) return;
    const seconds = BAN_LENGTHS[banning.length]?.seconds;
    const body = { ...(banning.reason.trim() ? { banReason: banning.reason.trim() } : {}), ...(seconds ? { banExpiresIn: seconds } : {}) };
    setBanning(null);
    void action.run(() => api.post(userPath(u, 'ban'), body), u.id);
  };
  const unban = (u: SignInUser) => void action.run(() => api.post(userPath(u, 'unban')), u.id);
  const revoke = (u: SignInUser) => {
    if (window.confirm(`Sign ${u.email} out everywhere?`)) void action.run(() => api.post(userPath(u, 'revoke-sessions')), u.id);
  };
  const toggleAdmin = (u: SignInUser) => void action.run(() => api.post(userPath(u, 'role'), { role: isAdmin(u) ? 'user' : 'admin' }), u.id);
  return (
    <div className="card">
      <h2>Users</h2>
      <Field label="Search by email or name" name="user-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
      <ErrorNotice error={users.error ?? action.error} />
      {users.loading && !users.data ? <Loading what="users" /> : null}
      {users.data && users.data.users.length === 0 ? <p className="muted">{search ? 'No user matches.' : 'Nobody has signed up yet.'}</p> : null}
      {users.data && users.data.users.length > 0 ? (
        <div className="table-wrap">
          <table aria-label="Users">
            <thead>
              <tr>
                <th>Email</th>
                <th>Name</th>
                <th>Verified</th>
                <th>Role</th>
                <th>Status</th>
                <th>Signed up</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((u) => (
                <Fragment key={u.id}>
                  <tr>
                    <td className="mono">{u.email}</td>
                    <td>{u.name}</td>
                    <td>{u.emailVerified ? 'yes' : 'no'}</td>
                    <td>{u.role}</td>
                    <td>
                      {u.banned ? `banned${u.banExpires ? ` until ${formatWhen(u.banExpires)}` : ''}${u.banReason ? ` (${u.banReason})` : ''}` : 'active'}
                    </td>
                    <td>{formatWhen(u.createdAt)}</td>
                    <td>
                      {u.banned ? (
                        <Button variant="secondary" busy={action.busy === u.id} disabled={busy} onClick={() => unban(u)}>
                          Unban
                        </Button>
                      ) : (
                        <Button variant="danger" busy={action.busy === u.id} disabled={busy} onClick={() => setBanning({ id: u.id, reason: '', length: 0 })}>
                          Ban…
                        </Button>
                      )}{' '}
                      <Button variant="ghost" disabled={busy} onClick={() => revoke(u)}>
                        Sign out everywhere
                      </Button>{' '}
                      <Button variant="ghost" disabled={busy} onClick={() => toggleAdmin(u)}>
                        {isAdmin(u) ? 'Make user' : 'Make admin'}
                      </Button>
                    </td>
                  </tr>
                  {banning?.id === u.id ? (
                    <tr>
                      <td colSpan={7}>
                        <div className="inline-form">
                          <Field
                            label="Reason (optional)"
                            name="ban-reason"
                            value={banning.reason}
                            onChange={(e) => setBanning({ ...banning, reason: e.target.value })}
                          />
                          <label>
                            For
                            <select name="ban-length" value={banning.length} onChange={(e) => setBanning({ ...banning, length: Number(e.target.value) })}>
                              {BAN_LENGTHS.map((l, i) => (
                                <option key={l.label} value={i}>
                                  {l.label}
                                </option>
                              ))}
                            </select>
                          </label>
                          <Button variant="danger" onClick={() => ban(u)}>
                            Ban {u.email}
                          </Button>
                          <Button variant="ghost" onClick={() => setBanning(null)}>
                            Cancel
                          </Button>
                        </div>
                        <p className="muted">Their sessions end at once and they cannot sign in until the ban ends or you lift it.</p>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
          {users.data.total > users.data.users.length ? (
            <p className="muted">
              Showing the newest {users.data.users.length} of {users.data.total}.
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function isAdmin(u: SignInUser): boolean {
  return u.role.split(',').includes('admin');
}
