import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, loadConfig, port, publicUrlFields, z } from '@slipway/config';
import { checkLocalRuntime, localRuntimeFields, nginxPlaneFields } from '@slipway/data-plane';

const { HOST, LOG_LEVEL, SLIPWAY_LAUNCHER_PID } = baseServerFields;

/**
 * The runtime supervisor's environment: the edge's (the launcher gives both the same one), of
 * which it reads the local runtime and the nginx plane, never the database or Redis.
 */
export const supervisorConfigSchema = z
  .object({
    HOST,
    LOG_LEVEL,
    /** Set by `pnpm start`: the supervisor stops every app when the launcher is gone. */
    SLIPWAY_LAUNCHER_PID,
    /** The platform's addresses: the ports a sandboxed app may reach (`appHostPorts`), nginx's scheme. */
    ...publicUrlFields,
    /** The edge's port: nginx listens on it, and apps may reach it from their sandbox. */
    PORT: port(8080),
    /** Where release artifacts are unpacked from: BLOB_DIR or S3_* (see libs/blob). */
    ...blobStorageFields,
    ...localRuntimeFields,
    ...nginxPlaneFields,
  })
  .superRefine((config, ctx) => {
    checkBlobStorage(config, ctx);
    checkLocalRuntime(config, ctx);
  });

export type SupervisorConfig = z.output<typeof supervisorConfigSchema>;

/** The only place this app reads the environment. */
export function loadSupervisorConfig(env: NodeJS.ProcessEnv = process.env): SupervisorConfig {
  return loadConfig(supervisorConfigSchema, env);
}
