import type { Warning } from '@slipway/analyzer';
import type { PortFound } from '@slipway/runtime';

/**
 * `port_not_from_env` once the runtime found where the app listens instead of PORT: the analyzer's
 * warning (added when the analyzer could not tell, say for a port read from a file) now names the
 * port found and says that the platform routes there.
 */
export function withPortFound(warnings: Warning[], found: PortFound): void {
  const warning: Warning = {
    code: 'port_not_from_env',
    detail: String(found.port),
    message: `The server listens on port ${found.port} instead of the port the platform assigns in PORT (${found.envPort} at this start). The platform found it listening on ${found.port} and routes traffic there; read process.env.PORT to make this unnecessary (a server on two ports, or on none yet when its start is checked, cannot be routed).`,
  };
  const at = warnings.findIndex((w) => w.code === 'port_not_from_env');
  if (at >= 0) warnings[at] = warning;
  else warnings.push(warning);
}
