import { mergeEnvFile, parseEnvLines } from './env-file.js';

const INCOMING = [
  '# Slipway sign-in service',
  'SERVICE_AUTH_BASE_URL=http://localhost:3001/a/shop',
  'SERVICE_AUTH_COOKIE_SECRET=s3cr3t',
  'SERVICE_AUTH_JWKS_URL=http://localhost:3001/a/shop/jwks',
  'VITE_SERVICE_AUTH_URL=http://localhost:3001/a/shop',
  '',
].join('\n');

describe('mergeEnvFile', () => {
  it('writes every variable into an empty or missing file', () => {
    const merged = mergeEnvFile('', INCOMING);
    expect(merged.text).toBe(
      'SERVICE_AUTH_BASE_URL=http://localhost:3001/a/shop\nSERVICE_AUTH_COOKIE_SECRET=s3cr3t\nSERVICE_AUTH_JWKS_URL=http://localhost:3001/a/shop/jwks\nVITE_SERVICE_AUTH_URL=http://localhost:3001/a/shop\n',
    );
    expect(merged.added).toEqual(['SERVICE_AUTH_BASE_URL', 'SERVICE_AUTH_COOKIE_SECRET', 'SERVICE_AUTH_JWKS_URL', 'VITE_SERVICE_AUTH_URL']);
    expect(merged.replaced).toEqual([]);
  });

  it('appends after existing content, adding the missing final newline', () => {
    const merged = mergeEnvFile('# mine\nDATABASE_URL=postgres://x', 'SERVICE_AUTH_BASE_URL=a\n');
    expect(merged.text).toBe('# mine\nDATABASE_URL=postgres://x\nSERVICE_AUTH_BASE_URL=a\n');
  });

  it('replaces existing keys in place and never repeats one, keeping comments and other keys', () => {
    const existing = [
      'PORT=3000',
      '# auth',
      'SERVICE_AUTH_BASE_URL=http://old',
      'export SERVICE_AUTH_COOKIE_SECRET = "old"',
      'OTHER=1',
      'SERVICE_AUTH_BASE_URL=http://older-duplicate',
      '',
    ].join('\n');
    const merged = mergeEnvFile(existing, INCOMING);
    expect(merged.text).toBe(
      [
        'PORT=3000',
        '# auth',
        'SERVICE_AUTH_BASE_URL=http://localhost:3001/a/shop',
        'SERVICE_AUTH_COOKIE_SECRET=s3cr3t',
        'OTHER=1',
        'SERVICE_AUTH_JWKS_URL=http://localhost:3001/a/shop/jwks',
        'VITE_SERVICE_AUTH_URL=http://localhost:3001/a/shop',
        '',
      ].join('\n'),
    );
    expect(merged.replaced).toEqual(['SERVICE_AUTH_BASE_URL', 'SERVICE_AUTH_COOKIE_SECRET']);
    expect(merged.added).toEqual(['SERVICE_AUTH_JWKS_URL', 'VITE_SERVICE_AUTH_URL']);
  });

  it('is idempotent: merging the same answer twice changes nothing', () => {
    const once = mergeEnvFile('A=1\n', INCOMING).text;
    const twice = mergeEnvFile(once, INCOMING);
    expect(twice.text).toBe(once);
    expect(twice.added).toEqual([]);
    for (const key of parseEnvLines(INCOMING).keys()) expect(twice.text.split(`${key}=`)).toHaveLength(2);
  });

  it('keeps Windows line endings', () => {
    expect(mergeEnvFile('A=1\r\nSERVICE_AUTH_BASE_URL=x\r\n', 'SERVICE_AUTH_BASE_URL=y\nB=2').text).toBe('A=1\r\nSERVICE_AUTH_BASE_URL=y\r\nB=2\r\n');
  });

  it('does not take a commented-out key or a key that merely starts the same for the variable', () => {
    const merged = mergeEnvFile('# SERVICE_AUTH_BASE_URL=commented\nSERVICE_AUTH_BASE_URL_OLD=keep\n', 'SERVICE_AUTH_BASE_URL=new');
    expect(merged.text).toBe('# SERVICE_AUTH_BASE_URL=commented\nSERVICE_AUTH_BASE_URL_OLD=keep\nSERVICE_AUTH_BASE_URL=new\n');
  });
});
