import type { DeploymentTask, Step } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { FindingCard } from '../components/finding-card.js';
import { ErrorNotice, Loading, StatusBadge } from '../components/ui.js';
import { formatDuration, formatWhen, isTerminal } from '../format.js';
import { Link } from '../router.js';
import { useEffect, useState } from 'react';
import { visibleControls } from '@slipway/contract';

/**
 * The install and build output while the deploy runs (server-sent events of the worker's
 * redacted lines); closed once the task is final — the steps' logs below keep it then.
 */
function LiveBuildOutput({ appId, deploymentId }: { appId: string; deploymentId: string }) {
  const [text, setText] = useState('');
  useEffect(() => {
    const source = new EventSource(`/dashboard/api/applications/${appId}/deployments/${deploymentId}/log/stream`);
    source.onmessage = (event: MessageEvent<string>) => {
      const chunk = JSON.parse(event.data) as { step: string; text: string };
      setText((all) => (all + chunk.text).slice(-64_000));
    };
    return () => source.close();
  }, [appId, deploymentId]);
  if (!text) return null;
  return (
    <div className="card">
      <h2>Build output</h2>
      <pre className="log" data-testid="live-build-output">
        {visibleControls(text)}
      </pre>
    </div>
  );
}

/** Polls the task every 1.5 s until it succeeds or fails, like any API client would. */
const POLL_MS = 1500;

export function DeploymentPage({ appId, deploymentId }: { appId: string; deploymentId: string }) {
  const task = useResource<DeploymentTask>(`/applications/${appId}/deployments/${deploymentId}`, {
    pollMs: POLL_MS,
    keepPolling: (t) => !isTerminal(t.status),
  });
  if (task.loading) return <Loading what="the deployment" />;
  if (!task.data) return <ErrorNotice error={task.error} />;
  const t = task.data;
  const running = !isTerminal(t.status);
  return (
    <div className="stack">
      <nav className="breadcrumbs" aria-label="Breadcrumb">
        <Link to="/">Applications</Link> <span aria-hidden="true">/</span> <Link to={`/apps/${appId}/deployments`}>Deployments</Link>{' '}
        <span aria-hidden="true">/</span>{' '}
        <span aria-current="page" className="mono">
          {t.taskId.slice(0, 8)}
        </span>
      </nav>
      <div className="page-head">
        <div>
          <h1>
            Deployment <span className="mono">{t.taskId.slice(0, 8)}</span>
          </h1>
          <p className="muted">
            Started {formatWhen(t.createdAt)}
            {t.startedAt && t.finishedAt ? ` · took ${formatDuration(new Date(t.finishedAt).getTime() - new Date(t.startedAt).getTime())}` : ''}
          </p>
        </div>
        <div className="deploy-status" aria-live="polite" data-testid="deployment-status">
          <StatusBadge status={t.status} />
          {running ? <span className="muted live-dot">updating live</span> : null}
        </div>
      </div>
      <ErrorNotice error={task.error} />
      {t.status === 'succeeded' && t.url ? (
        <div className="notice notice-success">
          Live at{' '}
          <a href={t.url} target="_blank" rel="noreferrer" className="mono">
            {t.url}
          </a>
        </div>
      ) : null}
      {t.status === 'failed' && t.error ? (
        <div className="notice notice-danger" role="alert">
          <strong>Failed{t.error.step ? ` at ${t.error.step}` : ''}:</strong> {t.error.message}
        </div>
      ) : null}
      {running ? <LiveBuildOutput appId={appId} deploymentId={deploymentId} /> : null}
      <Findings title="Hazards" kind="hazard" items={t.hazards} />
      <Findings title="Warnings" kind="warning" items={t.warnings} />
      <div className="card">
        <h2>Steps</h2>
        <ol className="steps">
          {t.steps.map((s) => (
            <StepRow key={s.name} step={s} />
          ))}
        </ol>
      </div>
      <div className="card">
        <h2>Project</h2>
        {t.spec ? <SpecList spec={t.spec} /> : <p className="muted">Described once the analyze step has run.</p>}
      </div>
    </div>
  );
}

function Findings({ title, kind, items }: { title: string; kind: 'warning' | 'hazard'; items: DeploymentTask['warnings'] }) {
  if (!items.length) return null;
  return (
    <section className="findings" aria-label={title}>
      <h2>
        {title} <span className="muted">({items.length})</span>
      </h2>
      <div className="finding-grid">
        {items.map((f, i) => (
          <FindingCard key={`${f.code}-${i}`} finding={f} kind={kind} />
        ))}
      </div>
    </section>
  );
}

function StepRow({ step }: { step: Step }) {
  const live = step.status === 'running' && step.startedAt ? Date.now() - new Date(step.startedAt).getTime() : null;
  return (
    <li className={`step step-${step.status}`} data-step={step.name}>
      <div className="step-head">
        <span className="step-dot" aria-hidden="true" />
        <span className="step-name">{step.name}</span>
        <StatusBadge status={step.status} />
        <span className="muted step-duration">
          {step.durationMs !== null ? formatDuration(step.durationMs) : live !== null ? `${formatDuration(live)}…` : ''}
        </span>
      </div>
      {step.log ? (
        <details open={step.status === 'running' || step.status === 'failed'}>
          <summary>Log</summary>
          <pre className="log">{step.log}</pre>
        </details>
      ) : null}
    </li>
  );
}

/** The spec as a readable list (nested values summarised), never a JSON dump. */
function SpecList({ spec }: { spec: Record<string, unknown> }) {
  return (
    <dl className="facts">
      {Object.entries(spec).map(([key, value]) => (
        <div key={key} className="fact">
          <dt>{humanise(key)}</dt>
          <dd>{describe(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

function humanise(key: string): string {
  const words = key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function describe(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length ? value.map(describe).join(', ') : 'none';
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${humanise(k)}: ${describe(v)}`)
      .join(' · ');
  }
  return String(value);
}
