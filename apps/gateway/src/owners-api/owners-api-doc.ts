import { SetMetadata } from '@nestjs/common';
import type { ErrorCode } from '@slipway/contract';
import type { z } from 'zod';

export const OWNERS_API_DOC = 'slipway:owners-api-doc';

/** What the owners' API OpenAPI document says about one route beyond what its decorators say. */
export interface OwnersApiDoc {
  summary: string;
  request?: z.ZodType;
  response?: z.ZodType;
  errors?: ErrorCode[];
}

/**
 * Describes an owners'-API route in `GET /dashboard/api/openapi.json`. Every route under
 * /dashboard/api is listed there (found from Nest's own route metadata) with its method, path and
 * who may call it; this adds a summary, and schemas where they are written down.
 */
export const OwnersApi = (doc: OwnersApiDoc) => SetMetadata(OWNERS_API_DOC, doc);
