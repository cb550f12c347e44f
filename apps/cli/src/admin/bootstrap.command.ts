import { fileURLToPath } from 'node:url';
import { readRuntimeFile, z } from '@slipway/config';
import { PLANS, terminalJson, visibleControls, type PlanName } from '@slipway/contract';
import { openPlatformData } from '@slipway/platform-data';
import { UsageError, parseFlags } from '../args.js';
import { bootstrap, type BootstrapResult } from './bootstrap.service.js';

const REPO_HOME = fileURLToPath(new URL('../../../../.slipway', import.meta.url));

export const BOOTSTRAP_USAGE = `Usage: slipway admin bootstrap --email <email> --app <name> [--plan free|go|pro|scale] [--json]

Creates the owner if missing, the application if missing, and a new project API key and
personal access token. Talks to the platform database directly: DATABASE_URL, or the one a
running \`pnpm start\` published in .slipway/runtime.json.`;

const envSchema = z.object({
  DATABASE_URL: z.string().optional(),
  PUBLIC_URL: z.string().url().optional(),
  AUTH_PUBLIC_URL: z.string().url().optional(),
  APPS_DOMAIN: z.string().optional(),
  APPS_SCHEME: z.enum(['http', 'https']).optional(),
  SLIPWAY_HOME: z.string().optional(),
});

export async function bootstrapCommand(args: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<number> {
  const { values } = parseFlags(args, {
    email: { type: 'string' },
    app: { type: 'string' },
    plan: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    out.write(`${BOOTSTRAP_USAGE}\n`);
    return 0;
  }
  if (!values.email || !values.app) throw new UsageError(`--email and --app are required\n\n${BOOTSTRAP_USAGE}`);
  if (values.plan && !PLANS.includes(values.plan as PlanName)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);

  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const runtime = readRuntimeFile(parsed.data.SLIPWAY_HOME ?? REPO_HOME);
  const databaseUrl = parsed.data.DATABASE_URL ?? runtime?.databaseUrl;
  if (!databaseUrl) {
    throw new UsageError('no platform database: start the platform with `pnpm start` first, or set DATABASE_URL');
  }
  const platform = openPlatformData({ DATABASE_URL: databaseUrl }, { poolSize: 1 });
  let result: BootstrapResult;
  try {
    result = await bootstrap(
      platform.owners,
      { email: values.email, appName: values.app, plan: values.plan as PlanName | undefined },
      {
        publicUrl: parsed.data.PUBLIC_URL ?? runtime?.publicUrl ?? 'http://localhost:3000',
        authPublicUrl: parsed.data.AUTH_PUBLIC_URL ?? runtime?.authPublicUrl ?? 'http://localhost:3001',
        appsDomain: parsed.data.APPS_DOMAIN ?? runtime?.appsDomain ?? 'localhost:8080',
        appsScheme: parsed.data.APPS_SCHEME ?? runtime?.appsScheme ?? 'http',
      },
    );
  } finally {
    await platform.close();
  }
  if (values.json) {
    const { created: _created, plan: _plan, ...json } = result;
    out.write(`${terminalJson(json)}\n`);
  } else {
    // Read back from the database and runtime.json: shown with any control character visible, as every text the CLI prints.
    out.write(
      visibleControls(
        [
          `Owner        ${values.email.toLowerCase()} (${result.plan})${result.created.owner ? ' — created' : ''}`,
          `Application  ${result.slug} (${result.applicationId})${result.created.application ? ' — created' : ''}`,
          `App address  ${result.appUrl}`,
          `Sign-in URL  ${result.authBaseUrl}`,
          `API key      ${result.apiKey}`,
          `Owner token  ${result.ownerToken}`,
          '',
          'The key and token are shown once; store them now. Deploy a folder with:',
          `  SLIPWAY_URL=${result.baseUrl} SLIPWAY_API_KEY=${result.apiKey} slipway deploy ./my-site`,
          '',
        ].join('\n'),
      ),
    );
  }
  return 0;
}
