export { TwoFactorModule } from './two-factor.module.js';
export { TwoFactorChallenges } from './two-factor-challenge.service.js';
