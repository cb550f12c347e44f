import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SERVER_URL, TestDnsServer } from '@slipway/testing';
import pg from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { fromLocalInput, toLocalInput } from '../src/restore-window.js';
import { startGatewayProcess, WORKSPACE_ROOT, type GatewayProcess } from './support/gateway-process.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(WORKSPACE_ROOT, 'test-output/screenshots');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/**
 * Real browser, real built gateway serving the real built dashboard. There is no build worker in
 * this suite: after the real deploy call the test advances the deployment row exactly as the
 * worker would (status, step timestamps, spec, warnings, hazards) and watches the page follow.
 */
describe('dashboard in Chromium', () => {
  let gw: GatewayProcess;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGatewayProcess('dashboard-browser', { SLIPWAY_DNS_SERVERS: dns.address });
    profile = await mkdtemp(join(tmpdir(), 'slipway-chromium-'));
    await mkdir(SHOTS, { recursive: true });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: DESKTOP,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => void dialog.accept());
  }, 60_000);

  const createdDatabases: string[] = [];
  afterAll(async () => {
    // The application database switching sign-in on created on the shared test server.
    for (const id of createdDatabases) {
      const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "app_${id.replace(/-/g, '')}" WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS "app_${id.replace(/-/g, '')}"`);
      await admin.end();
    }
    await context?.close();
    await gw?.stop();
    await dns?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  const shot = async (name: string) => {
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
  };

  it('signs up, creates an app and a key, deploys through the API and watches the deployment reach succeeded with its findings', async () => {
    await page.goto(`${gw.url}/`);
    await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await shot('sign-in');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Your name').fill('Ada');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The browser's own validation stops a too-short password before any request is sent.
    expect(await page.getByLabel('Password').evaluate((el: HTMLInputElement) => el.validity.tooShort)).toBe(true);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
    await page.getByText('Free plan · 0 of 1 database').waitFor();
    await page.getByText('No applications yet').waitFor();
    // No build worker runs in this suite: the banner says builds are paused (the gateway reads the workers' heartbeats).
    await page.getByRole('status').filter({ hasText: 'Builds are paused.' }).waitFor();
    await shot('applications-empty');

    await page.getByLabel('Name', { exact: true }).fill('Test Shop');
    await page.getByText('Its address will start with test-shop').waitFor();
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { name: 'Test Shop', level: 1 }).waitFor();
    await page.getByText('test-shop.localhost:8080').first().waitFor();
    const cli = await page.getByLabel('Deploy with the CLI').textContent();
    expect(cli).toBe(`SLIPWAY_URL=${gw.url} SLIPWAY_API_KEY=slw_key_… pnpm slipway deploy ./my-project`);
    expect(await page.getByLabel('Deploy with curl').textContent()).toContain(`curl -X POST ${gw.url}/api/v1/deploy`);
    await shot('application-empty-deployments');
    const appId = new URL(page.url()).pathname.split('/')[2]!;

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name of the new API key').fill('CI');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('once-secret').textContent())!;
    expect(key).toMatch(/^slw_key_\w{10}_\w{43}$/);
    await page.getByRole('cell', { name: key.slice(0, 18) + '…' }).waitFor();
    await shot('api-keys');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.content()).not.toContain(key);

    await page.getByRole('link', { name: 'Secrets' }).click();
    await page.getByLabel('Name', { exact: true }).fill('stripe_key');
    await page.getByLabel('Value', { exact: true }).fill('sk_test_123');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByText('STRIPE_KEY saved').waitFor();
    expect(await page.content()).not.toContain('sk_test_123');
    await page.getByLabel('Name', { exact: true }).fill('9BAD');
    await page.getByLabel('Value', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Save secret' }).click();
    expect(await page.getByLabel('Name', { exact: true }).evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
    await shot('secrets');

    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('textbox', { name: 'Domain', exact: true }).fill('Shop.Example.com.');
    await page.getByRole('button', { name: 'Add domain' }).click();
    // A pending claim: the exact record to set, nothing trusted yet.
    const domain = page.getByRole('listitem', { name: 'Domain shop.example.com' });
    await domain.getByText('Pending verification').waitFor();
    const record = domain.getByRole('table', { name: 'DNS record for shop.example.com' });
    expect(await record.getByRole('row').allInnerTexts()).toEqual([
      expect.stringMatching(/^Name\s+_slipway-challenge\.shop\.example\.com\s/i),
      expect.stringMatching(/^Type\s+TXT\s*$/i),
      expect.stringMatching(/^Value\s+slipway-verify=[0-9a-f]{64}\s/i),
    ]);
    const value = (await record.getByRole('row').nth(2).getByRole('cell').first().innerText()).trim();
    expect(await domain.getByText('https://shop.example.com').count()).toBe(0);
    await shot('domains-pending');
    // Verify before the record exists: a readable error naming the record and its value.
    await page.getByRole('button', { name: 'Verify shop.example.com' }).click();
    await page.getByRole('alert').getByText(`No TXT record at _slipway-challenge.shop.example.com`).waitFor();
    expect(await page.getByRole('alert').innerText()).toContain(value);
    dns.setTxt('_slipway-challenge.shop.example.com', ['slipway-verify=not-this-one']);
    await page.getByRole('button', { name: 'Verify shop.example.com' }).click();
    await page
      .getByRole('alert')
      .getByText(/does not hold this claim's value \(found "slipway-verify=not-this-one"\)/)
      .waitFor();
    await shot('domains-wrong-record');
    dns.setTxt('_slipway-challenge.shop.example.com', [value]);
    await page.getByRole('button', { name: 'Verify shop.example.com' }).click();
    await domain.getByText('Verified', { exact: true }).waitFor();
    await domain.getByText('https://shop.example.com').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('textbox', { name: 'Domain', exact: true }).fill('shop.example.com');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('alert').getByText('This application already claims shop.example.com.').waitFor();
    await shot('domains');

    await page.getByRole('link', { name: 'Database' }).click();
    await page.getByRole('heading', { name: 'No database yet' }).waitFor();
    await shot('database');

    await page.getByRole('link', { name: 'Sign-in', exact: true }).click();
    await page.getByRole('button', { name: 'Switch sign-in on' }).click();
    await page.getByRole('heading', { name: 'Sign-in is on' }).waitFor();
    createdDatabases.push(appId);
    await page.getByRole('button', { name: 'Show environment variables' }).click();
    const envText = await page.getByTestId('sign-in-env').textContent();
    expect(envText).toMatch(
      /SERVICE_AUTH_BASE_URL=http:\/\/localhost:3001\/a\/test-shop\nSERVICE_AUTH_COOKIE_SECRET=[\w-]{43}\nSERVICE_AUTH_JWKS_URL=\S+\nVITE_SERVICE_AUTH_URL=\S+/,
    );
    await page.getByText('Nobody has signed up yet.').waitFor();
    await page.getByLabel('Require email verification before sign-in').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    await shot('sign-in');
    // Plugins: one switch each, saved at once through the owners' API.
    const plugins = page.getByRole('region', { name: 'Plugins' });
    await plugins.getByText('Email one-time codes').waitFor();
    await plugins.getByLabel('Issuer name shown by authenticator apps').fill('Test Shop');
    await plugins.getByRole('switch', { name: 'Two-factor authentication' }).check();
    await plugins.getByRole('switch', { name: 'Passkeys' }).check();
    const storedPlugins = async () => (await gw.sql.query('SELECT settings FROM sign_in_services WHERE application_id = $1', [appId])).rows[0].settings.plugins;
    const eventually = async (read: () => Promise<unknown>, expected: unknown) => {
      for (let i = 0; ; i++) {
        try {
          return expect(await read()).toMatchObject(expected as object);
        } catch (error) {
          if (i >= 100) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    await eventually(storedPlugins, { twoFactor: { enabled: true, issuer: 'Test Shop' }, passkey: { enabled: true } });
    await plugins.getByRole('switch', { name: 'Passkeys' }).uncheck();
    await eventually(storedPlugins, { passkey: { enabled: false } });
    expect(await plugins.getByRole('switch', { name: 'Two-factor authentication' }).isChecked()).toBe(true);
    // An OpenID Connect provider: added, its callback URL shown, an internal issuer refused, removed.
    const oidc = page.getByRole('form', { name: 'OpenID Connect providers' });
    await oidc.getByLabel('Provider id').fill('corp-sso');
    await oidc.getByLabel('Issuer URL').fill('https://169.254.169.254/latest');
    await oidc.getByLabel('Client id').fill('corp-client');
    await oidc.getByLabel('Client secret').fill('corp-secret');
    await oidc.getByRole('button', { name: 'Add provider' }).click();
    await oidc.getByRole('alert').waitFor();
    await oidc.getByLabel('Issuer URL').fill('https://login.example.com');
    await oidc.getByRole('button', { name: 'Add provider' }).click();
    expect(await oidc.getByTestId('oidc-callback-corp-sso').textContent()).toBe('http://localhost:3001/a/test-shop/callback/corp-sso');
    await shot('sign-in-plugins');
    await oidc.getByRole('button', { name: 'Remove corp-sso' }).click();
    await oidc.getByText('No provider yet.').waitFor();
    await page.getByRole('link', { name: 'Database' }).click();
    await page.getByRole('heading', { name: 'Test Shop’s database' }).waitFor();

    // A real deploy through the contract's API with the key the dashboard issued.
    const form = new FormData();
    form.append('files', new Blob(['<h1>hello</h1>']), 'index.html');
    form.append('paths', 'index.html');
    const deploy = await fetch(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(deploy.status).toBe(202);
    const { taskId } = (await deploy.json()) as { taskId: string };

    await page.getByRole('link', { name: 'Deployments' }).click();
    await page.getByRole('link', { name: taskId.slice(0, 8) }).click();
    const status = page.getByTestId('deployment-status');
    await status.getByText('queued').waitFor();
    await page.getByText('updating live').waitFor();

    // building: receive done, analyze running (as the worker writes it).
    const t0 = Date.now() - 5000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const steps = (names: Record<string, [string, number | null, number | null, string?]>) =>
      JSON.stringify(
        ['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release'].map((name) => {
          const [s, start, end, log] = names[name] ?? ['pending', null, null];
          return {
            name,
            status: s,
            startedAt: start === null ? null : iso(start),
            finishedAt: end === null ? null : iso(end),
            durationMs: start !== null && end !== null ? end - start : null,
            log: log ?? '',
          };
        }),
      );
    await gw.sql.query(`UPDATE deployments SET status = 'building', started_at = $2, steps = $3 WHERE id = $1`, [
      taskId,
      iso(t0),
      steps({ receive: ['succeeded', t0, t0 + 420, 'received 1 file (14 B)'], analyze: ['running', t0 + 420, null, 'detecting project kind…'] }),
    ]);
    await status.getByText('building').waitFor();
    await page.locator('[data-step="receive"]').getByText('420 ms').waitFor();
    await page.locator('[data-step="analyze"]').getByText('detecting project kind…').waitFor();
    await shot('deployment-building');

    await gw.sql.query(`UPDATE deployments SET status = 'releasing', spec = $2, steps = $3 WHERE id = $1`, [
      taskId,
      JSON.stringify({ kind: 'static', outputDirectory: '.', files: 1, bytes: 14 }),
      steps({
        receive: ['succeeded', t0, t0 + 420],
        analyze: ['succeeded', t0 + 420, t0 + 900],
        install: ['skipped', null, null],
        build: ['skipped', null, null],
        scan: ['succeeded', t0 + 900, t0 + 1300],
        package: ['succeeded', t0 + 1300, t0 + 1500],
        release: ['running', t0 + 1500, null, 'swapping release'],
      }),
    ]);
    await status.getByText('releasing').waitFor();
    await page.getByText('Output directory').waitFor();

    await gw.sql.query(`UPDATE deployments SET status = 'succeeded', finished_at = $2, steps = $3, warnings = $4, hazards = $5 WHERE id = $1`, [
      taskId,
      iso(t0 + 2100),
      steps({
        receive: ['succeeded', t0, t0 + 420],
        analyze: ['succeeded', t0 + 420, t0 + 900],
        install: ['skipped', null, null],
        build: ['skipped', null, null],
        scan: ['succeeded', t0 + 900, t0 + 1300],
        package: ['succeeded', t0 + 1300, t0 + 1500],
        release: ['succeeded', t0 + 1500, t0 + 2100, 'live'],
      }),
      JSON.stringify([
        { code: 'missing_secret', message: 'The code reads SENTRY_DSN, which is not set.', path: 'src/monitoring.js', detail: 'Set it in the Secrets tab.' },
      ]),
      JSON.stringify([{ code: 'secret_in_source', severity: 'high', message: 'A Stripe live key is committed in the source.', path: 'config/keys.js' }]),
    ]);
    await status.getByText('succeeded').waitFor();
    await page.getByText('Live at').waitFor();
    const warning = page.getByRole('article', { name: 'warning: missing_secret' });
    await warning.getByText('The code reads SENTRY_DSN, which is not set.').waitFor();
    await warning.getByText('src/monitoring.js').waitFor();
    const hazard = page.getByRole('article', { name: 'hazard: secret_in_source' });
    await hazard.getByText('config/keys.js').waitFor();
    expect(await hazard.getAttribute('class')).toContain('finding-danger');
    expect(await warning.getAttribute('class')).toContain('finding-warning');
    expect(await page.getByText('updating live').count()).toBe(0);
    await page.getByText('took 2.1 s').waitFor();
    await shot('deployment-succeeded');

    await page.goto(`${gw.url}/apps/${appId}/deployments`);
    await page.getByText('1 hazard').waitFor();
    await page.getByText('1 warning').waitFor();
    await shot('deployments');

    await page.getByRole('link', { name: 'Applications' }).first().click();
    await page.getByRole('link', { name: 'Test Shop' }).waitFor();
    await shot('applications');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That email and password do not match an account.').waitFor();
  }, 180_000);

  it('shows what the database can be restored to, marks a restore point and follows restores to their end', async () => {
    // Test Shop's database exists (sign-in was switched on above). No launcher runs here: the test
    // writes the catalogue rows exactly as its backup service would, and watches the tab follow.
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Test Shop' }).click();
    await page.getByRole('link', { name: 'Database' }).click();
    const appId = new URL(page.url()).pathname.split('/')[2]!;
    await page.getByText('No backup to restore from yet.').waitFor();

    const baseAt = new Date(Date.now() - 2 * 3600_000);
    await gw.sql.query(
      `INSERT INTO backups (kind, status, trigger, blob_key, size_bytes, wal_start, started_at, finished_at) VALUES ('base', 'succeeded', 'schedule', 'base/1', 52428800, '000000010000000000000002', $1, $1)`,
      [baseAt],
    );
    // The tab looks again every 5 s while there is nothing to restore to.
    await page.getByText(/^Restorable to any moment since .+ \(your plan: 1 day\)\./).waitFor({ timeout: 10_000 });
    const backups = page.getByRole('table', { name: 'Backups and restore points' });
    await backups.getByRole('row', { name: /Full backup .* 50 MiB/ }).waitFor();

    await page.getByLabel('Label (optional)').fill('before the orders migration');
    await page.getByRole('button', { name: 'Mark a restore point' }).click();
    await page.getByRole('status').getByText('Restore point “before the orders migration” marked').waitFor();
    const point = backups.getByRole('row', { name: /Restore point .*“before the orders migration”/ });
    await point.waitFor();

    // A moment before the window is refused before anything is sent.
    const moment = page.getByLabel('Date and time (your time zone)');
    // It starts a few minutes back.
    const minutesBack = (Date.now() - fromLocalInput(await moment.inputValue())!.getTime()) / 60_000;
    expect(minutesBack).toBeGreaterThan(4);
    expect(minutesBack).toBeLessThan(7);
    await moment.fill(toLocalInput(new Date(baseAt.getTime() - 3600_000)));
    await page.getByText('That is before the earliest moment you can restore to').waitFor();
    expect(await page.getByRole('button', { name: 'Restore into a new database' }).isDisabled()).toBe(true);

    // In place replaces what the application sees: only once its name is typed.
    await page.getByRole('radio', { name: /^In place/ }).check();
    await page.getByRole('radio', { name: /^A backup or restore point/ }).check();
    const inPlace = page.getByRole('button', { name: 'Restore Test Shop’s database in place' });
    expect(await inPlace.isDisabled()).toBe(true);
    await page.getByLabel('Type Test Shop to confirm').fill('Test Shop');
    expect(await inPlace.isEnabled()).toBe(true);
    await shot('database-restore-in-place');

    // Into a new database, to the restore point picked from the list.
    await page.getByRole('radio', { name: /^A new database/ }).check();
    await point.getByRole('button').click();
    // The form, ready to restore to it.
    await page.waitForFunction(() => document.activeElement?.id === 'restore-to-backup');
    expect(await page.getByLabel('Which backup or restore point').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.textContent)).toContain(
      '“before the orders migration”',
    );
    await page.getByRole('button', { name: 'Restore into a new database' }).click();
    const restores = page.getByRole('list', { name: 'Recent restores' });
    const first = restores.getByRole('listitem').first();
    await first.getByText('Waiting for the backup service…').waitFor();
    // One at a time: the API's own sentence.
    await page.getByRole('button', { name: 'Restore into a new database' }).click();
    await page.getByRole('alert').getByText('A restore of this database is already queued or running').waitFor();

    await gw.sql.query(`UPDATE database_restores SET status = 'running', step = 'replaying the WAL', started_at = now() WHERE application_id = $1`, [appId]);
    await first.getByText('Replaying the WAL…').waitFor({ timeout: 5000 });
    await shot('database-restore-running');
    await gw.sql.query(
      `UPDATE database_restores SET status = 'succeeded', step = 'done', database_name = 'app_restored', size_bytes = 8388608, finished_at = now() WHERE application_id = $1`,
      [appId],
    );
    await first.getByText(/^Restored as app_restored \(8\.0 MiB\), beside the current database\./).waitFor({ timeout: 5000 });

    // In place, to a moment; it fails, and says why in the reader's time.
    await page.getByRole('radio', { name: /^A moment/ }).check();
    await moment.fill(toLocalInput(new Date(Date.now() - 10 * 60_000)));
    await page.getByRole('radio', { name: /^In place/ }).check();
    await page.getByLabel('Type Test Shop to confirm').fill('Test Shop');
    await inPlace.click();
    await restores.getByRole('listitem').nth(1).waitFor();
    await gw.sql.query(
      `UPDATE database_restores SET status = 'failed', step = 'copying the database', error = 'the database did not exist yet at 2026-01-02T03:04:05.000Z', finished_at = now() WHERE application_id = $1 AND status = 'queued'`,
      [appId],
    );
    const failed = await restores
      .getByRole('listitem')
      .first()
      .getByText(/^The restore failed while copying the database: the database did not exist yet at /)
      .innerText();
    expect(failed).not.toContain('2026-01-02T03:04:05');

    // The platform's last base backup failed: a banner on the tab.
    await gw.sql.query(
      `INSERT INTO backups (kind, status, trigger, started_at, finished_at, error) VALUES ('base', 'failed', 'schedule', now(), now(), 'disk full')`,
    );
    await page.reload();
    await page.getByRole('status').getByText('The platform’s last backup failed').waitFor();
    expect(await page.content()).not.toContain('disk full');
    await shot('database-backups');
  }, 120_000);
});
