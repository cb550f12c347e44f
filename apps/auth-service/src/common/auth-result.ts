import type { Response } from 'express';

/** What a sign-in service operation answers: a JSON body plus cookies, headers or a redirect. */
export interface AuthResult {
  body?: unknown;
  cookies?: string[];
  headers?: Record<string, string>;
  redirect?: string;
}

/** Applies an AuthResult to the response; controllers return what this returns. */
export function reply(res: Response, result: AuthResult): unknown {
  if (result.cookies?.length) res.append('Set-Cookie', result.cookies);
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  if (result.redirect) {
    res.redirect(302, result.redirect);
    return undefined;
  }
  res.status(200);
  // Nest would turn `null` into an empty body; Better Auth's client reads JSON `null` as "no session".
  if (result.body === null) {
    res.type('application/json').send('null');
    return undefined;
  }
  res.json(result.body);
  return undefined;
}
