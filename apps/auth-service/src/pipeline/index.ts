export { AuthPipelineMiddleware } from './auth-pipeline.middleware.js';
export { requestMeta, type AuthRequest, type RequestMeta } from './auth-request.js';
export { PipelineModule } from './pipeline.module.js';
export { isTrustedOrigin } from './origin-check.js';
export { SignInAttempts, type AttemptPurpose, type SignInAttempt } from './sign-in-attempts.service.js';
