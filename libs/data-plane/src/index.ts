// The data plane of one host: nginx in front of the apps, the apps' local runtime, and the
// runtime supervisor's protocol. The edge programs it; the runtime supervisor runs what must
// outlive an edge restart (apps/runtime-supervisor). Deep imports are not allowed: this is the API.
export * from './config.js';
export { EdgePlane, planeDirs, type EdgePlaneConfig, type PlaneRoute, type PlaneSources, type PlaneUpstream, type Synced } from './nginx/edge-plane.js';
export { NginxKeeper, MASTER_POLL_MS, type NginxKeeperConfig } from './nginx/nginx-keeper.js';
export { NginxPlane, type NginxPlaneOptions, type Reloaded } from './nginx/nginx-plane.js';
export { SLOT_SWITCH_MS, type NginxConfigInput, type Site, type TlsInput } from './nginx/nginx-config.js';
export { runningMaster } from './nginx/nginx-process.js';
export { grantWorkers, nginxWorker, type NginxWorker } from './nginx/nginx-user.js';
export { FINGERPRINTED } from './static/fingerprinted.js';
export { isForbiddenSegment } from './static/forbidden-segment.js';
export { appHostPorts, createLocalDriver, loopbackPort, type LocalDriverConfig } from './runtime/local-driver.js';
export { RemoteRuntimeDriver } from './supervisor/remote-driver.js';
export { readLines, send, type RunningInfo, type SupervisorAnswer, type SupervisorError, type SupervisorRequest } from './supervisor/protocol.js';
