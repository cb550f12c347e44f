import { z } from 'zod';

export const SignUpBody = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email('enter a valid email address')),
  password: z.string().min(10, 'use at least 10 characters').max(200, 'use at most 200 characters'),
  name: z.string().trim().max(100).optional(),
});
