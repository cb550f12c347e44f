import { z } from 'zod';

export const CreateApplicationBody = z.object({
  name: z.string().trim().min(1, 'give the application a name').max(100, 'use at most 100 characters'),
});
