/**
 * End users of a deployed app's sign-in service, as the fault suite measures them: a few clients
 * side by side, each signing up a new user and then reading its session a few times, over a new
 * connection per request (independent browsers). Bounded in time and in count. Every sign-up the
 * service acknowledged (200 with a session cookie) is remembered, so that a test can check
 * afterwards that each of those users can still sign in: nothing acknowledged was lost.
 */
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { clock } from './launched.js';

/** One sign-in request's outcome: when it was sent, what it was, and its status (0: no answer). */
export interface SignInSample {
  at: number;
  /** Until the answer (or the failure), ms. */
  ms: number;
  kind: 'sign-up' | 'session';
  status: number;
  /** A session read answered 200 for the user it was made for; a sign-up answered 200 with a session cookie. */
  ok: boolean;
  detail?: string;
}

export interface SignInLoopOptions {
  clients?: number;
  /** Session reads after each sign-up. */
  readsPerSignUp?: number;
  /** A request without an answer after this long failed (default 5 s, as RequestLoop's app requests). */
  timeoutMs?: number;
  maxMs?: number;
  maxRequests?: number;
}

interface Answer {
  status: number;
  body: string;
  cookies: string[];
  error?: string;
}

const PASSWORD = 'a long passphrase for the faults';
const SESSION_COOKIE = '__Secure-slipway.session_token';

export class SignInLoop {
  readonly samples: SignInSample[] = [];
  /** Emails of the users whose sign-up was acknowledged. */
  readonly acknowledged: string[] = [];
  private stopped = false;
  private readonly done: Promise<void>;
  private readonly run = randomBytes(3).toString('hex');
  private readonly timeoutMs: number;

  /** `port`: the sign-in service's; `slug`: the application's; `origin`: one of its trusted origins (its own address). */
  constructor(
    private readonly port: number,
    private readonly slug: string,
    private readonly origin: string,
    options: SignInLoopOptions = {},
  ) {
    const { clients = 4, readsPerSignUp = 4, maxMs = 10 * 60_000, maxRequests = 100_000, timeoutMs = 5000 } = options;
    this.timeoutMs = timeoutMs;
    const end = Date.now() + maxMs;
    const more = () => !this.stopped && Date.now() < end && this.samples.length < maxRequests;
    this.done = Promise.all(Array.from({ length: clients }, (_, i) => this.client(i, readsPerSignUp, more))).then(() => undefined);
  }

  private async client(index: number, readsPerSignUp: number, more: () => boolean): Promise<void> {
    for (let n = 0; more(); n++) {
      const email = `loop-${this.run}-${index}-${n}@example.com`;
      const at = clock();
      const signUp = await this.send('POST', '/sign-up/email', { email, password: PASSWORD, name: `Client ${index}` });
      const cookie = signUp.cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
      const acknowledged = signUp.status === 200 && cookie !== undefined;
      this.samples.push({
        at,
        ms: clock() - at,
        kind: 'sign-up',
        status: signUp.status,
        ok: acknowledged,
        ...(acknowledged ? {} : { detail: signUp.error ?? signUp.body.slice(0, 200) }),
      });
      if (acknowledged) this.acknowledged.push(email);
      await pause();
      for (let r = 0; acknowledged && r < readsPerSignUp && more(); r++) {
        const readAt = clock();
        const read = await this.send('GET', '/get-session', undefined, cookie);
        const ok = read.status === 200 && sessionOf(read.body) === email;
        this.samples.push({
          at: readAt,
          ms: clock() - readAt,
          kind: 'session',
          status: read.status,
          ok,
          ...(ok ? {} : { detail: read.error ?? read.body.slice(0, 200) }),
        });
        await pause();
      }
    }
  }

  /** Signs `email` in (after the loop): whether the service knows the user and its password. */
  async signIn(email: string): Promise<Answer> {
    return this.send('POST', '/sign-in/email', { email, password: PASSWORD });
  }

  /** The acknowledged users that can no longer sign in (each tried once, one after another). */
  async lostUsers(): Promise<{ email: string; status: number; detail: string }[]> {
    const lost: { email: string; status: number; detail: string }[] = [];
    for (const email of this.acknowledged) {
      const answer = await this.signIn(email);
      if (answer.status !== 200) lost.push({ email, status: answer.status, detail: answer.error ?? answer.body.slice(0, 200) });
    }
    return lost;
  }

  private send(method: 'GET' | 'POST', path: string, body?: unknown, cookie?: string): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { origin: this.origin, connection: 'close' };
    if (payload) headers['content-type'] = 'application/json';
    if (cookie) headers['cookie'] = cookie;
    return new Promise((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: this.port, method, path: `/a/${this.slug}${path}`, headers, agent: false, timeout: this.timeoutMs },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!) }));
          res.on('error', (error) => resolve({ status: 0, body: '', cookies: [], error: error.message }));
        },
      );
      req.on('error', (error) => resolve({ status: 0, body: '', cookies: [], error: (error as NodeJS.ErrnoException).code ?? error.message }));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs / 1000} s`)));
      req.end(payload);
    });
  }

  /** Samples sent at or after `from` (and before `to`). */
  between(from: number, to = Infinity): SignInSample[] {
    return this.samples.filter((s) => s.at >= from && s.at < to);
  }

  /** Counts for a stretch of the loop: what was tried, what failed (by kind), and a few failures' details. */
  summary(from = 0, to = Infinity): SignInSummary {
    const window = this.between(from, to);
    const of = (kind: SignInSample['kind']) => window.filter((s) => s.kind === kind);
    const failed = window.filter((s) => !s.ok);
    return {
      signUps: of('sign-up').length,
      failedSignUps: of('sign-up').filter((s) => !s.ok).length,
      sessionReads: of('session').length,
      failedSessionReads: of('session').filter((s) => !s.ok).length,
      // The first two failures of each kind.
      slowestMs: Math.max(0, ...window.map((s) => s.ms)),
      examples: [...failed.filter((s) => s.kind === 'sign-up').slice(0, 2), ...failed.filter((s) => s.kind === 'session').slice(0, 2)].map(
        (s) => `${s.kind} ${s.status}${s.detail ? ` ${s.detail}` : ''}`,
      ),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

export interface SignInSummary {
  signUps: number;
  failedSignUps: number;
  sessionReads: number;
  failedSessionReads: number;
  /** The longest a request of the stretch waited for its answer. */
  slowestMs: number;
  examples: string[];
}

/** `2 of 31 sign-ups, 0 of 120 session reads failed` (plus the first failures). */
export function formatSignInSummary(summary: SignInSummary): string {
  const base = `${summary.failedSignUps} of ${summary.signUps} sign-ups, ${summary.failedSessionReads} of ${summary.sessionReads} session reads failed, slowest ${(summary.slowestMs / 1000).toFixed(1)} s`;
  return summary.examples.length ? `${base} (${summary.examples.join('; ')})` : base;
}

/** The email of the user a get-session body names (undefined for `null` or anything else). */
function sessionOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { user?: { email?: string } } | null)?.user?.email;
  } catch {
    return undefined;
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
