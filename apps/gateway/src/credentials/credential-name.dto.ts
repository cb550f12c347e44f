import { z } from 'zod';

/** Body of creating or renaming a project API key or a personal access token. */
export const CredentialNameBody = z.object({
  name: z.string().trim().min(1, 'give it a name').max(100, 'use at most 100 characters'),
});
