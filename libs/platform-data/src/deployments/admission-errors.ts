/** The one active deploy of the application is still queued, building or releasing (the partial unique index said so). */
export class ActiveDeployExistsError extends Error {
  override readonly name = 'ActiveDeployExistsError';
}

/** The application had its deploys of the last hour. */
export class HourlyLimitReachedError extends Error {
  override readonly name = 'HourlyLimitReachedError';
}
