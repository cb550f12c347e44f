import { domainToASCII } from 'node:url';
import { z } from 'zod';

const NAME_ASCII = /^[A-Za-z0-9.-]$/;
/** An ASCII character that has no place in a host name (`/`, `?`, `#`, `\\`, `%`, `@`, `:`, `_`, space, controls…). */
const hasForeignAscii = (value: string) => [...value].some((c) => c.charCodeAt(0) < 0x80 && !NAME_ASCII.test(c));
const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * The one spelling of a host name the platform stores, routes and trusts: UTS-46 mapped
 * (`domainToASCII`: case folded, full-width letters and dots folded, IDNs as punycode, invalid
 * punycode refused), then one dot at the end dropped. `Shop.Example.com.`, `ＳＨＯＰ．example．com`
 * and `shop.example.com` are one name; `bücher.example` is `xn--bcher-kva.example`.
 * Returns '' for anything that is not a host name.
 */
export function normaliseHostname(input: string): string {
  const trimmed = input.trim();
  // domainToASCII parses like a URL's host: it would cut `shop.example.com/x` (or `?x`, `#x`,
  // `\\x`) down to `shop.example.com` and decode `%2E`. Only letters, digits, `-` and `.` of ASCII
  // may be typed (other scripts and full-width forms go through UTS-46 below).
  if (hasForeignAscii(trimmed)) return '';
  const ascii = domainToASCII(trimmed).replace(/\.$/, '');
  return HOSTNAME.test(ascii) ? ascii : '';
}

export const AddDomainBody = z.object({
  hostname: z.string().max(1024).transform(normaliseHostname).pipe(z.string().min(1, 'enter a host name such as shop.example.com (no scheme, port or path)')),
});
