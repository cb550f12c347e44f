import { Logger } from '@nestjs/common';
import type { CertStore, StoredCertificate } from './cert-store.js';
import type { IssuedCertificate } from './acme-issuer.js';

export interface CertificateManagerOptions {
  concurrency: number;
  renewFraction: number;
  checkIntervalMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

/** What `GET /_slipway/tls` shows per host. */
export interface HostTlsStatus {
  host: string;
  state: 'queued' | 'issuing' | 'valid' | 'renewing' | 'retrying';
  notAfter: string | null;
  renewAt: string | null;
  serial: string | null;
  failures: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  /** The wait before that attempt (doubles per failure, up to the maximum). */
  retryDelayMs: number | null;
}

interface HostState {
  cert?: StoredCertificate;
  queued: boolean;
  issuing: boolean;
  failures: number;
  lastError?: string;
  retryTimer?: NodeJS.Timeout;
  nextAttemptAt?: Date;
  retryDelayMs?: number;
}

/**
 * Keeps a certificate for every host it is given: issues the missing ones and renews each once
 * `renewFraction` of its lifetime has passed (checked every `checkIntervalMs`), at most
 * `concurrency` orders at a time; a failure is logged, shown in `status()` and retried after a
 * delay that doubles from `retryMinMs` to `retryMaxMs`. A host that is no longer given loses its
 * certificate at once (files removed). Nothing here ever waits on the HTTP path: every change ends
 * in `onChange(all usable certificates)`, which re-renders and reloads the data plane.
 */
export class CertificateManager {
  private readonly logger = new Logger('tls');
  private readonly hosts = new Map<string, HostState>();
  private readonly queue: string[] = [];
  private active = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;
  private applying: Promise<void> = Promise.resolve();
  private pendingApply = false;
  private updating: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: CertStore,
    private readonly issue: (host: string) => Promise<IssuedCertificate>,
    private readonly onChange: (certs: StoredCertificate[]) => Promise<void>,
    private readonly options: CertificateManagerOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.checkRenewals(), this.options.checkIntervalMs);
    this.timer.unref();
  }

  /** The full set of hosts that should have a certificate (every call replaces the last; calls run in order). */
  setHosts(wanted: Iterable<string>): Promise<void> {
    const next = new Set(wanted);
    this.updating = this.updating.then(() => this.replaceHosts(next));
    return this.updating;
  }

  private async replaceHosts(next: Set<string>): Promise<void> {
    let changed = false;
    for (const [host, state] of this.hosts) {
      if (next.has(host)) continue;
      clearTimeout(state.retryTimer);
      this.hosts.delete(host);
      changed = true;
      this.logger.log(`${host}: no longer served; certificate removed`);
    }
    // Files of hosts that went away (also while the edge was down) go too.
    for (const host of await this.store.hosts()) {
      if (!next.has(host)) await this.store.remove(host);
    }
    for (const host of next) {
      if (this.hosts.has(host)) continue;
      const state: HostState = { queued: false, issuing: false, failures: 0 };
      this.hosts.set(host, state);
      state.cert = await this.store.load(host);
      if (state.cert) changed = true;
      if (!state.cert || this.due(state.cert)) this.enqueue(host);
    }
    if (changed) this.apply();
  }

  status(): HostTlsStatus[] {
    return [...this.hosts]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([host, s]) => ({
        host,
        state: s.issuing ? (s.cert ? 'renewing' : 'issuing') : s.retryTimer ? 'retrying' : s.queued ? 'queued' : s.cert ? 'valid' : 'queued',
        notAfter: s.cert?.notAfter.toISOString() ?? null,
        renewAt: s.cert ? this.renewAt(s.cert).toISOString() : null,
        serial: s.cert?.serial ?? null,
        failures: s.failures,
        lastError: s.lastError ?? null,
        nextAttemptAt: s.nextAttemptAt?.toISOString() ?? null,
        retryDelayMs: s.retryDelayMs ?? null,
      }));
  }

  certificates(): StoredCertificate[] {
    return [...this.hosts.values()].flatMap((s) => (s.cert ? [s.cert] : []));
  }

  /** Resolves once every change so far has reached the data plane. */
  async settled(): Promise<void> {
    await this.applying;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const state of this.hosts.values()) clearTimeout(state.retryTimer);
  }

  private renewAt(cert: StoredCertificate): Date {
    const start = cert.notBefore.getTime();
    return new Date(start + (cert.notAfter.getTime() - start) * this.options.renewFraction);
  }

  private due(cert: StoredCertificate): boolean {
    return Date.now() >= this.renewAt(cert).getTime();
  }

  private checkRenewals(): void {
    for (const [host, state] of this.hosts) {
      if (state.cert && this.due(state.cert) && !state.retryTimer) this.enqueue(host);
    }
  }

  private enqueue(host: string): void {
    const state = this.hosts.get(host);
    if (!state || state.queued || state.issuing || this.closed) return;
    state.queued = true;
    this.queue.push(host);
    this.pump();
  }

  private pump(): void {
    while (this.active < this.options.concurrency && this.queue.length > 0) {
      const host = this.queue.shift()!;
      const state = this.hosts.get(host);
      if (!state) continue;
      state.queued = false;
      state.issuing = true;
      this.active++;
      void this.run(host, state).finally(() => {
        state.issuing = false;
        this.active--;
        this.pump();
      });
    }
  }

  private async run(host: string, state: HostState): Promise<void> {
    try {
      const issued = await this.issue(host);
      if (this.hosts.get(host) !== state || this.closed) return; // dropped meanwhile: keep nothing
      const previous = state.cert;
      state.cert = await this.store.save(host, issued.key, issued.certificatePem);
      state.failures = 0;
      state.lastError = undefined;
      state.nextAttemptAt = undefined;
      state.retryDelayMs = undefined;
      this.logger.log(
        `${host}: certificate ${previous ? 'renewed' : 'issued'} (serial ${state.cert.serial}, valid until ${state.cert.notAfter.toISOString()})`,
      );
      this.apply();
    } catch (error) {
      if (this.hosts.get(host) !== state || this.closed) return;
      state.failures++;
      state.lastError = oneLine(error);
      const delay = Math.min(this.options.retryMaxMs, this.options.retryMinMs * 2 ** Math.min(state.failures - 1, 30));
      state.nextAttemptAt = new Date(Date.now() + delay);
      state.retryDelayMs = delay;
      this.logger.warn(
        `${host}: certificate order failed (attempt ${state.failures}; ${state.cert ? 'the current certificate keeps serving' : 'served over HTTP meanwhile'}), retrying in ${Math.round(delay / 1000)} s: ${state.lastError}`,
      );
      state.retryTimer = setTimeout(() => {
        state.retryTimer = undefined;
        this.enqueue(host);
      }, delay);
      state.retryTimer.unref();
    }
  }

  /** One data-plane update at a time; changes that arrive meanwhile are folded into the next. */
  private apply(): void {
    if (this.pendingApply) return;
    this.pendingApply = true;
    this.applying = this.applying.then(async () => {
      this.pendingApply = false;
      try {
        await this.onChange(this.certificates());
      } catch (error) {
        this.logger.error(`the data plane did not take the certificates: ${oneLine(error)}`);
      }
    });
  }
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').slice(0, 500);
}
