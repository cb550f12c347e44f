import { ROOT_DIRECTORY_MAX_LENGTH, ROOT_DIRECTORY_PATTERN, checkRootDirectory } from './root-directory.js';

describe('checkRootDirectory (the deploy form field rootDirectory)', () => {
  it.each([
    ['apps/web', 'apps/web'],
    ['apps/web/', 'apps/web'],
    ['web', 'web'],
    ['packages/@scope/site+v2', 'packages/@scope/site+v2'],
    ['.config/site_1', '.config/site_1'],
    ['..hidden/a...b', '..hidden/a...b'],
    ['a'.repeat(ROOT_DIRECTORY_MAX_LENGTH), 'a'.repeat(ROOT_DIRECTORY_MAX_LENGTH)],
    [`${'a'.repeat(ROOT_DIRECTORY_MAX_LENGTH)}/`, 'a'.repeat(ROOT_DIRECTORY_MAX_LENGTH)],
  ])('accepts %s as %s', (raw, value) => {
    expect(checkRootDirectory(raw)).toEqual({ ok: true, value });
    expect(ROOT_DIRECTORY_PATTERN.test(raw)).toBe(true);
  });

  it.each([
    ['', 'is empty'],
    ['/', 'is absolute'],
    ['/apps/web', 'is absolute'],
    ['a'.repeat(ROOT_DIRECTORY_MAX_LENGTH + 1), `is longer than ${ROOT_DIRECTORY_MAX_LENGTH} characters`],
    ['apps//web', 'has an empty segment'],
    ['apps/web//', 'has an empty segment'],
    ['.', 'has a "." segment'],
    ['./apps/web', 'has a "." segment'],
    ['..', 'has a ".." segment'],
    ['apps/../../etc', 'has a ".." segment'],
    ['apps/web/..', 'has a ".." segment'],
    ['apps\\web', 'may hold only'],
    ['apps/w eb', 'may hold only'],
    ['apps/wéb', 'may hold only'],
    ['apps/web\n', 'may hold only'],
    ['apps/\u0000', 'may hold only'],
    ['C:/apps', 'may hold only'],
    ['~/apps', 'may hold only'],
  ])('refuses %j: rootDirectory %s', (raw, problem) => {
    const check = checkRootDirectory(raw);
    expect(check.ok).toBe(false);
    expect(ROOT_DIRECTORY_PATTERN.test(raw)).toBe(false);
    if (!check.ok) expect(check.problem).toMatch(new RegExp(`^${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});
