import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { Owner } from '../api/types.js';
import { Button, ErrorNotice, Field } from '../components/ui.js';
import { Link, useRouter } from '../router.js';
import { useSession } from '../session.js';

/** Sign up and sign in share one form: email, password, and a name when signing up. */
export function AuthPage({ mode }: { mode: 'sign-in' | 'sign-up' }) {
  const { setOwner } = useSession();
  const { navigate } = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const signingUp = mode === 'sign-up';

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const owner = await api.post<Owner>(`/session/${mode}`, signingUp ? { email, password, name: name || undefined } : { email, password });
      setOwner(owner);
      navigate('/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="auth-card card">
      <h1>{signingUp ? 'Create your Slipway account' : 'Sign in to Slipway'}</h1>
      <p className="muted">{signingUp ? 'Deploy applications, issue keys and watch every deploy.' : 'Welcome back.'}</p>
      <form onSubmit={(e) => void submit(e)} noValidate={false}>
        <ErrorNotice error={error} />
        {signingUp ? <Field label="Your name" name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} /> : null}
        <Field label="Email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete={signingUp ? 'new-password' : 'current-password'}
          required
          minLength={signingUp ? 10 : undefined}
          hint={signingUp ? 'At least 10 characters.' : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <Button type="submit" busy={busy}>
          {signingUp ? 'Create account' : 'Sign in'}
        </Button>
      </form>
      <p className="auth-switch">
        {signingUp ? (
          <>
            Already have an account? <Link to="/sign-in">Sign in</Link>
          </>
        ) : (
          <>
            New to Slipway? <Link to="/sign-up">Create an account</Link>
          </>
        )}
      </p>
    </div>
  );
}
