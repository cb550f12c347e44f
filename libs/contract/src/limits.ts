/** Published limits (`GET /api/v1` lists them). */
export const LIMITS = {
  deploysPerHourPerApplication: 20,
  concurrentDeploysPerApplication: 1,
  signInAttemptsPer10Seconds: 9,
  databasesPerPlan: { free: 1, go: 1, pro: 3, scale: 5 },
} as const;

export type PlanName = keyof typeof LIMITS.databasesPerPlan;
export const PLANS = Object.keys(LIMITS.databasesPerPlan) as PlanName[];
