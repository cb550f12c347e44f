import { useEffect, useRef, useState } from 'react';
import { visibleControls } from '@slipway/contract';
import type { ApplicationDetails } from '../api/types.js';

interface LogLine {
  time: string;
  stream: 'stdout' | 'stderr' | 'slipway';
  text: string;
  releaseId: string;
}

/** Lines kept on the page; older ones scroll away (`slipway logs --since` reads further back). */
const KEPT = 2000;

/**
 * The application's runtime logs, followed live: one EventSource (server-sent events) on the
 * owners' API — the last hour's newest 200 lines first, then each line as the app writes it.
 * The text is the app's own output: rendered as React text, its control characters shown as \u00xx.
 */
export function LogsTab({ app }: { app: ApplicationDetails }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const bottom = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const source = new EventSource(`/dashboard/api/applications/${app.id}/logs/stream?since=1h&limit=200`);
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.onmessage = (event: MessageEvent<string>) => {
      const line = JSON.parse(event.data) as LogLine;
      setLines((all) => [...all.slice(-(KEPT - 1)), line]);
    };
    return () => source.close();
  }, [app.id]);
  // A block body: recent Chromium's scrollIntoView returns a promise, and an effect that returns
  // anything but a function makes React call it as the cleanup (a TypeError that unmounts the page).
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'nearest' });
  }, [lines]);
  return (
    <div className="card stack">
      <div className="page-head">
        <h2>Runtime logs</h2>
        <span className="muted live-dot" data-testid="logs-state">
          {state === 'live' ? 'following live' : state}
        </span>
      </div>
      {lines.length === 0 ? <p className="muted">No lines in the last hour yet. They appear here as the app writes them.</p> : null}
      <div className="log runtime-log" role="log" aria-label="Runtime log lines" data-testid="runtime-log">
        {lines.map((line, i) => (
          <div key={i} className={`log-line log-${line.stream}`} data-stream={line.stream}>
            <span className="muted mono">{line.time.slice(11, 23)}</span> <span className="muted mono">{line.releaseId.slice(0, 8)}</span>{' '}
            <span className="mono">{line.stream}</span> <span className="mono">{visibleControls(line.text)}</span>
          </div>
        ))}
        <div ref={bottom} />
      </div>
    </div>
  );
}
