import { useId, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode } from 'react';
import { describeError } from '../api/client.js';

export function Field({ label, hint, error, ...input }: { label: string; hint?: ReactNode; error?: string | null } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint ? (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function Button({
  variant = 'primary',
  busy,
  children,
  ...rest
}: { variant?: 'primary' | 'secondary' | 'danger' | 'ghost'; busy?: boolean } & ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button className={`button button-${variant}`} disabled={busy || rest.disabled} aria-busy={busy || undefined} {...rest}>
      {children}
    </button>
  );
}

/** A problem from the API, worded for a person and announced to screen readers. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div className="notice notice-danger" role="alert">
      {describeError(error)}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard access can be refused (insecure origin, permissions); the text stays selectable.
    }
    setCopied(true);
    window.setTimeout(() => setCopied(false), 2000);
  };
  return (
    <Button type="button" variant="secondary" onClick={() => void copy()} aria-live="polite">
      {copied ? 'Copied' : label}
    </Button>
  );
}

/** A command or value meant to be copied: monospace, selectable, with a copy button. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="code-block">
      <pre aria-label={label}>
        <code>{code}</code>
      </pre>
      <CopyButton value={code} />
    </div>
  );
}

/** A secret shown exactly once (new key or token, a connection string). */
export function OnceSecret({ title, value, onDone }: { title: string; value: string; onDone(): void }) {
  return (
    <div className="notice notice-success once-secret" role="status">
      <p>
        <strong>{title}</strong> Copy it now: it will not be shown again.
      </p>
      <div className="secret-row">
        <code className="secret-value" data-testid="once-secret">
          {value}
        </code>
        <CopyButton value={value} />
      </div>
      <Button type="button" variant="ghost" onClick={onDone}>
        I have saved it
      </Button>
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${toneOf(status)}`}>{status}</span>;
}

function toneOf(status: string): string {
  switch (status) {
    case 'succeeded':
    case 'live':
      return 'success';
    case 'failed':
    case 'revoked':
      return 'danger';
    case 'building':
    case 'releasing':
    case 'running':
      return 'progress';
    default:
      return 'neutral';
  }
}
