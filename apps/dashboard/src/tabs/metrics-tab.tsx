import { useState } from 'react';
import type { ApplicationDetails } from '../api/types.js';
import { useResource } from '../api/use-resource.js';
import { Button, ErrorNotice, Loading } from '../components/ui.js';
import { formatBytes } from '../format.js';

type Classes = Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
interface Point {
  time: string;
  requests: number;
  requestsPerSecond: number;
  byClass: Classes;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  cpu: number;
  memoryBytes: number | null;
  restarts: number;
}
interface Series {
  range: 'hour' | 'day';
  stepSeconds: number;
  summary: Omit<Point, 'time'>;
  points: Point[];
}

const W = 600;
const H = 120;
const CLASS_COLOURS: Record<keyof Classes, string> = { '1xx': '#8c96a8', '2xx': '#17794a', '3xx': '#2f5bd3', '4xx': '#8a5a00', '5xx': '#b42318' };

/** Stacked bars (answers by class per interval) or a line (latency, CPU, memory), drawn as SVG: no chart library. */
function BarChart({ title, points }: { title: string; points: Point[] }) {
  const max = Math.max(1, ...points.map((p) => p.requests));
  const w = W / points.length;
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${points.reduce((n, p) => n + p.requests, 0)} requests`}>
        {points.map((p, i) => {
          let y = H;
          return (Object.keys(CLASS_COLOURS) as (keyof Classes)[]).map((c) => {
            const h = (p.byClass[c] / max) * (H - 4);
            if (h <= 0) return null;
            y -= h;
            return (
              <rect key={`${i}-${c}`} x={i * w + 0.5} y={y} width={Math.max(1, w - 1)} height={h} fill={CLASS_COLOURS[c]}>
                <title>{`${new Date(p.time).toLocaleTimeString()}: ${p.byClass[c]} ${c}`}</title>
              </rect>
            );
          });
        })}
      </svg>
    </figure>
  );
}

function LineChart({ title, values, format }: { title: string; values: (number | null)[]; format: (v: number) => string }) {
  const known = values.filter((v): v is number => v !== null);
  const max = Math.max(...known, 0) || 1;
  const step = W / Math.max(1, values.length - 1);
  const path = values
    .map((v, i) => (v === null ? null : `${i * step},${H - 2 - (v / max) * (H - 6)}`))
    .filter(Boolean)
    .join(' ');
  return (
    <figure className="chart">
      <figcaption>
        {title} <span className="muted">(max {known.length ? format(max) : '–'})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${known.length ? `up to ${format(max)}` : 'no data'}`}>
        <polyline points={path} fill="none" stroke="#2f5bd3" strokeWidth="1.5" />
        {/* A dot per interval with data: a lone minute shows too. */}
        {values.map((v, i) => (v === null ? null : <circle key={i} cx={i * step} cy={H - 2 - (v / max) * (H - 6)} r="2.5" fill="#2f5bd3" />))}
      </svg>
    </figure>
  );
}

const ms = (v: number | null) => (v === null ? '–' : `${v} ms`);

export function MetricsTab({ app }: { app: ApplicationDetails }) {
  const [range, setRange] = useState<'hour' | 'day'>('hour');
  const series = useResource<Series>(`/applications/${app.id}/metrics?range=${range}`, { pollMs: 10_000, keepPolling: () => true });
  if (series.loading && !series.data) return <Loading what="metrics" />;
  if (!series.data) return <ErrorNotice error={series.error} />;
  const { summary: s, points } = series.data;
  return (
    <div className="stack">
      <div className="inline-form">
        <Button variant={range === 'hour' ? 'primary' : 'secondary'} onClick={() => setRange('hour')}>
          Last hour
        </Button>
        <Button variant={range === 'day' ? 'primary' : 'secondary'} onClick={() => setRange('day')}>
          Last day
        </Button>
      </div>
      <dl className="card metrics-summary" data-testid="metrics-summary">
        <dt>Requests</dt>
        <dd>
          {s.requests} ({s.requestsPerSecond}/s)
        </dd>
        <dt>By class</dt>
        <dd>{(Object.keys(s.byClass) as (keyof Classes)[]).map((c) => `${c} ${s.byClass[c]}`).join(' · ')}</dd>
        <dt>Latency</dt>
        <dd>
          p50 {ms(s.latencyMs.p50)} · p95 {ms(s.latencyMs.p95)} · p99 {ms(s.latencyMs.p99)}
        </dd>
        <dt>CPU</dt>
        <dd>{Math.round(s.cpu * 1000) / 10}% of a core</dd>
        <dt>Memory</dt>
        <dd>{s.memoryBytes === null ? '–' : formatBytes(s.memoryBytes)}</dd>
        <dt>Restarts</dt>
        <dd>{s.restarts}</dd>
      </dl>
      <div className="card">
        <BarChart title={`Requests per ${range === 'hour' ? 'minute' : '10 minutes'}`} points={points} />
        <LineChart title="p95 latency" values={points.map((p) => p.latencyMs.p95)} format={(v) => `${v} ms`} />
        <LineChart title="CPU" values={points.map((p) => (p.requests || p.cpu ? p.cpu : null))} format={(v) => `${Math.round(v * 1000) / 10}%`} />
        <LineChart title="Memory" values={points.map((p) => p.memoryBytes)} format={formatBytes} />
      </div>
    </div>
  );
}
