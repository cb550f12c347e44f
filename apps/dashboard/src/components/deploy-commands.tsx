import type { ApplicationDetails } from '../api/types.js';
import { CodeBlock } from './ui.js';

/** The first-deploy instructions, filled in for this application. */
export function DeployCommands({ app }: { app: ApplicationDetails }) {
  const base = app.apiBaseUrl.replace(/\/api\/v1$/, '');
  const curl = `tar -czf site.tar.gz -C ./my-project .
curl -X POST ${app.apiBaseUrl}/deploy \\
  -H "Authorization: Bearer $SLIPWAY_API_KEY" \\
  -F archive=@site.tar.gz`;
  const cli = `SLIPWAY_URL=${base} SLIPWAY_API_KEY=slw_key_… pnpm slipway deploy ./my-project`;
  return (
    <div className="deploy-commands">
      <p>
        Create an API key in the <strong>API keys</strong> tab, then deploy <strong>{app.name}</strong> with the CLI:
      </p>
      <CodeBlock label="Deploy with the CLI" code={cli} />
      <p>or with curl (any folder, packed as a tar.gz, zip or tar):</p>
      <CodeBlock label="Deploy with curl" code={curl} />
      <p className="muted">
        The answer carries a <code>taskId</code>; the deployment appears here and updates live.
      </p>
    </div>
  );
}
