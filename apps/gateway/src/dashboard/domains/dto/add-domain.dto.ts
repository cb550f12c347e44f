import { z } from 'zod';

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

export const AddDomainBody = z.object({
  hostname: z
    .string()
    .trim()
    .toLowerCase()
    .transform((v) => v.replace(/\.$/, ''))
    .pipe(z.string().regex(HOSTNAME, 'enter a host name such as shop.example.com (no scheme, port or path)')),
});
