export * from './process.js';
export * from './redis.js';
export * from './test-database.js';
export * from './service.js';
export * from './deploy-harness.js';
export * from './health-suite.js';
export * from './pod-security/pod-shape.js';
export * from './pod-security/restricted.js';
export * from './pod-security/hardening.js';
export * from './dns-server.js';
export * from './launched-platform.js';
export * from './platform-http.js';
export * from './raw-http.js';
export * from './tar-gz.js';
export * from './terminal-bytes.js';
export * from './raw-exchange.js';
/** Request framing (RFC 9112 §6) from the attacker's side, for both data planes' specs. */
export * as framing from './framing-client.js';
