/**
 * End users of one application signing up on its sign-in service, one after another, as a browser
 * would (the application's origin): each acknowledged sign-up (200) keeps its session cookie, so a
 * test can read every acknowledged session back afterwards and prove none was lost. Bounded in
 * time and in count.
 */
export interface SignUpAttempt {
  at: number;
  email: string;
  /** 0: no answer. */
  status: number;
  /** `name=value` of the session cookie of an acknowledged sign-up. */
  cookie?: string;
}

interface App {
  slug: string;
  appUrl: string;
}

const TIMEOUT_MS = 10_000;

export class SignUpLoop {
  readonly attempts: SignUpAttempt[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly authPort: number,
    private readonly app: App,
    private readonly label: string,
    intervalMs = 200,
    maxMs = 5 * 60_000,
    maxAttempts = 2000,
  ) {
    this.done = (async () => {
      const end = Date.now() + maxMs;
      while (!this.stopped && Date.now() < end && this.attempts.length < maxAttempts) {
        this.attempts.push(await signUp(this.authPort, this.app, `${this.label}-${this.attempts.length}@example.com`));
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
  }

  acknowledged(): SignUpAttempt[] {
    return this.attempts.filter((a) => a.status === 200);
  }

  /** Waits until `count` sign-ups sent at or after `from` were acknowledged. */
  async acknowledgedAfter(from: number, count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acknowledged().filter((a) => a.at >= from).length < count) {
      if (Date.now() > deadline)
        throw new Error(
          `fewer than ${count} sign-ups acknowledged after ${new Date(from).toISOString()} within ${timeoutMs} ms (last: ${JSON.stringify(this.attempts.at(-1))})`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

async function signUp(authPort: number, app: App, email: string): Promise<SignUpAttempt> {
  const at = Date.now();
  try {
    const response = await fetch(`http://127.0.0.1:${authPort}/a/${app.slug}/sign-up/email`, {
      method: 'POST',
      headers: { origin: app.appUrl, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'a long passphrase', name: 'Visitor' }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    const cookie = response.headers
      .getSetCookie()
      .find((line) => /session_token=/.test(line))
      ?.split(';')[0];
    return { at, email, status: response.status, ...(cookie ? { cookie } : {}) };
  } catch {
    return { at, email, status: 0 };
  }
}

/** `GET /a/<slug>/get-session` with an acknowledged sign-up's cookie: the user's email, or why not. */
export async function sessionEmail(authPort: number, app: App, cookie: string): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${authPort}/a/${app.slug}/get-session`, {
      headers: { origin: app.appUrl, cookie },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => null)) as { user?: { email?: string } } | null;
    return response.status === 200 && body?.user?.email ? body.user.email : `status ${response.status}: ${JSON.stringify(body)?.slice(0, 200)}`;
  } catch (error) {
    return `no answer: ${(error as Error).message}`;
  }
}
