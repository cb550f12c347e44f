import { Inject, Injectable } from '@nestjs/common';
import { ApiException } from '@slipway/service-kit';
import { edgeInternalToken } from '@slipway/messaging';
import type { LogLine } from '@slipway/runtime';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

export interface RuntimeLogQuery {
  since?: number;
  until?: number;
  release?: string;
  limit: number;
}

/**
 * An application's runtime logs, read from the edge host that writes them (its internal API at
 * EDGE_INTERNAL_URL, with the internal token): the history by time window, and a follow that the
 * edge streams as NDJSON while the lines are written (inotify on its logs directory). The gateway
 * keeps nothing and polls nothing; the owner check happened before (OwnedApplicationRoute).
 */
@Injectable()
export class RuntimeLogsService {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  private url(applicationId: string, follow: boolean, query: Partial<RuntimeLogQuery> & { limit: number }): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    return `${this.config.EDGE_INTERNAL_URL.replace(/\/$/, '')}/_slipway/applications/${applicationId}/logs${follow ? '/follow' : ''}?${params}`;
  }

  private async call(url: string, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(url, { headers: { authorization: `Bearer ${edgeInternalToken(this.config.SLIPWAY_MASTER_KEY)}` }, signal }).catch(
      (error: Error) => {
        throw new ApiException('unavailable', `The edge that keeps the runtime logs does not answer (${error.message}); retry shortly.`);
      },
    );
    if (response.status === 501)
      throw new ApiException('not_found', 'This platform keeps no runtime logs of its own (kubernetes driver: read them with kubectl logs).');
    if (!response.ok) throw new ApiException('unavailable', `The edge answered ${response.status} for the runtime logs; retry shortly.`);
    return response;
  }

  async history(applicationId: string, query: RuntimeLogQuery): Promise<{ lines: LogLine[] }> {
    const response = await this.call(this.url(applicationId, false, query));
    return (await response.json()) as { lines: LogLine[] };
  }

  /**
   * `onOpen` once the edge accepted, then `onLine` for the backlog and for each line as it is
   * written, until `signal` aborts or the edge goes.
   */
  async follow(
    applicationId: string,
    query: Omit<RuntimeLogQuery, 'until'>,
    signal: AbortSignal,
    onLine: (line: LogLine) => void,
    onOpen: () => void,
  ): Promise<void> {
    const response = await this.call(this.url(applicationId, true, query), signal);
    onOpen();
    const decoder = new TextDecoder();
    let carry = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const text = carry + decoder.decode(chunk, { stream: true });
        const end = text.lastIndexOf('\n') + 1;
        carry = text.slice(end);
        for (const raw of text.slice(0, end).split('\n')) if (raw.trim()) onLine(JSON.parse(raw) as LogLine);
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
}
