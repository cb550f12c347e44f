import type { Prisma } from '@slipway/platform-schema';

/** Steps, specs, findings and errors are stored as they are, in `jsonb` columns. */
export const asJson = (value: unknown) => value as Prisma.InputJsonValue;
