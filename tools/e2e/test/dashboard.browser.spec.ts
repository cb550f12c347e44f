/**
 * The dashboard in a real browser against the whole platform: an owner signs up, creates an
 * application and a key, a deploy goes through the real worker, and the deployment page follows
 * it live to `succeeded` with its warnings; then sign-in is switched on.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { FIXTURES } from '@slipway/testing';
import { Platform, ROOT } from './support/platform.js';

const SHOTS = join(ROOT, 'test-output/screenshots/e2e');

describe('dashboard in Chromium, over the whole platform', () => {
  let platform: Platform;
  let profile: string;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    platform = await Platform.start('e2e-dashboard');
    profile = await mkdtemp(join(tmpdir(), 'slipway-chromium-'));
    await mkdir(SHOTS, { recursive: true });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await platform?.stop();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('signs up, creates an app and a key, watches a real deploy reach succeeded with its warnings, switches sign-in on', async () => {
    const base = `http://localhost:${platform.ports.gateway}`;
    await page.goto(base);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Your name').fill('Ada');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('Warned Shop');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { name: 'Warned Shop', level: 1 }).waitFor();
    const appPage = page.url();

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name of the new API key').fill('CI');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('once-secret').textContent())!;
    expect(key).toMatch(/^slw_key_/);
    await page.getByRole('button', { name: 'I have saved it' }).click();

    // A real deploy with that key: the project reads STRIPE_API_KEY, which is not set.
    const deploy = await platform.cli(['deploy', join(FIXTURES, 'warn-missing-secret'), '--no-wait', '--json'], { SLIPWAY_API_KEY: key });
    expect(deploy.code).toBe(0);
    const { taskId } = JSON.parse(deploy.stdout) as { taskId: string };

    await page.getByRole('link', { name: 'Deployments' }).click();
    await page.getByRole('link', { name: taskId.slice(0, 8) }).click();
    const status = page.getByTestId('deployment-status');
    await status.getByText('succeeded').waitFor({ timeout: 90_000 });
    await page.getByText('Live at').waitFor();
    const warning = page.getByRole('article', { name: 'warning: missing_secret' });
    await warning
      .getByText(/STRIPE_API_KEY/)
      .first()
      .waitFor();
    expect(await warning.getAttribute('class')).toContain('finding-warning');
    await page
      .locator('[data-step="release"]')
      .getByText(/Succeeded/i)
      .waitFor();
    await page.screenshot({ path: join(SHOTS, 'deployment-real-succeeded.png'), fullPage: true });

    // The app really answers at its address.
    expect(await platform.viaEdge('warned-shop')).toMatchObject({ status: 200, body: 'not configured' });

    await page.goto(appPage);
    await page.getByRole('link', { name: 'Sign-in', exact: true }).click();
    await page.getByRole('button', { name: 'Switch sign-in on' }).click();
    await page.getByRole('button', { name: 'Show environment variables' }).click();
    await page.getByText(/SERVICE_AUTH_BASE_URL=/).waitFor();
    await page.screenshot({ path: join(SHOTS, 'sign-in-on.png'), fullPage: true });

    // A secret for previews only, then a preview deployed with the key: the Previews tab links it.
    await page.goto(appPage);
    await page.getByRole('link', { name: 'Secrets', exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill('STRIPE_API_KEY');
    await page.getByLabel('Value').fill('sk_test_preview');
    await page.getByLabel('For').selectOption('preview');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByRole('list', { name: 'Secrets' }).getByText('previews only').waitFor();
    const preview = await platform.cli(['deploy', join(FIXTURES, 'warn-missing-secret'), '--preview', 'try', '--json'], { SLIPWAY_API_KEY: key });
    expect([preview.code, JSON.parse(preview.stdout).url]).toEqual([0, `http://warned-shop--try.localhost:${platform.ports.edge}`]);
    expect(JSON.parse(preview.stdout).warnings.map((w: { code: string }) => w.code)).not.toContain('missing_secret');
    expect(await platform.viaEdge('warned-shop--try')).toMatchObject({ status: 200, body: 'configured' });
    expect(await platform.viaEdge('warned-shop')).toMatchObject({ status: 200, body: 'not configured' });
    await page.getByRole('link', { name: 'Previews', exact: true }).click();
    await page
      .getByRole('list', { name: 'Previews' })
      .getByRole('link', { name: `http://warned-shop--try.localhost:${platform.ports.edge}` })
      .waitFor();
    await page.screenshot({ path: join(SHOTS, 'previews.png'), fullPage: true });
    await page.getByRole('button', { name: 'Delete preview try' }).click();
    await page.getByText('No previews.').waitFor();
  }, 240_000);
});
