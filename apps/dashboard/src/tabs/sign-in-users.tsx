import { useState } from 'react';
import type { SignInUser } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { ErrorNotice, Field, Loading } from '../components/ui.js';
import { formatWhen } from '../format.js';

export function SignInUsers({ appId }: { appId: string }) {
  const [search, setSearch] = useState('');
  const users = useResource<{ total: number; users: SignInUser[] }>(`/applications/${appId}/sign-in/users?search=${encodeURIComponent(search)}`);
  return (
    <div className="card">
      <h2>Users</h2>
      <Field label="Search by email or name" name="user-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
      <ErrorNotice error={users.error} />
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
                <th>Signed up</th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((u) => (
                <tr key={u.id}>
                  <td className="mono">{u.email}</td>
                  <td>{u.name}</td>
                  <td>{u.emailVerified ? 'yes' : 'no'}</td>
                  <td>{formatWhen(u.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {users.data.total > users.data.users.length ? <p className="muted">Showing the newest {users.data.users.length} of {users.data.total}.</p> : null}
        </div>
      ) : null}
    </div>
  );
}
