import { LIMITS } from '@slipway/contract';
import { SourcePathSet, unsafePathReason } from './source-path.js';

describe('unsafePathReason', () => {
  it.each(['index.html', 'src/a b/ü.ts', '.env.example', 'a/.hidden/x', 'bin/run.sh'])('accepts %s', (path) => {
    expect(unsafePathReason(path, LIMITS.upload)).toBeNull();
  });

  it.each([
    ['', 'is empty'],
    ['/etc/passwd', 'is absolute'],
    ['C:\\x', 'contains a backslash'],
    ['C:../x', 'is absolute'],
    ['../x', 'has a ".." segment'],
    ['a/../../x', 'has a ".." segment'],
    ['a\\..\\x', 'contains a backslash'],
    ['a//b', 'has an empty segment'],
    ['a/', 'has an empty segment'],
    ['./a', 'has a "." segment'],
    ['a\u0000b', 'contains NUL or a control character'],
    ['a\nb', 'contains NUL or a control character'],
    ['x'.repeat(256), 'has a segment longer than 255 bytes'],
    ['a/'.repeat(64) + 'b', 'is deeper than 64 segments'],
  ])('refuses %j: %s', (path, reason) => {
    expect(unsafePathReason(path, LIMITS.upload)).toBe(reason);
  });
});

describe('SourcePathSet', () => {
  it('finds duplicates, Unicode and case collisions, and file/directory clashes', () => {
    const set = new SourcePathSet();
    expect(set.add('src/Café.ts')).toBeNull();
    expect(set.add('src/Café.ts')).toBe('duplicates "src/Café.ts"');
    expect(set.add('src/Cafe\u0301.ts')).toMatch(/collides with "src\/Café.ts"|duplicates/);
    expect(set.add('SRC/CAFÉ.TS')).toMatch(/collides/);
    expect(set.add('src')).toBe('is both a file and a directory');
    expect(set.add('src/Café.ts/x')).toMatch(/is inside "src\/Café.ts"/);
    expect(set.add('src/other.ts')).toBeNull();
    expect(set.size).toBe(2);
  });

  it('refuses any path below a link, whichever comes first, and names what is in the way', () => {
    const set = new SourcePathSet();
    expect(set.add('Dir', 'link')).toBeNull();
    expect(set.add('dir/x')).toBe('is inside "Dir", which is a symbolic link');
    expect(set.addDirectory('Dir/sub')).toBe('is inside "Dir", which is a symbolic link');
    expect(set.addDirectory('dir')).toBe('is both a directory and a symbolic link ("Dir")');
    expect(set.addDirectory('real/sub')).toBeNull();
    expect(set.add('real', 'link')).toBe('is both a symbolic link and a directory');
    expect(set.add('real/sub/file')).toBeNull();
    expect(set.add('real/sub/file/x', 'link')).toBe('is inside "real/sub/file", which is a file');
  });
});
