import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../args.js';
import { takePreviewFlag } from './deploy.command.js';

describe('slipway deploy --preview [name]', () => {
  let dir: string;
  const cwd = process.cwd();
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-preview-flag-'));
    await mkdir(join(dir, 'site'));
    process.chdir(dir);
  });
  afterAll(async () => {
    process.chdir(cwd);
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a following name, or none, out of the arguments', () => {
    expect(takePreviewFlag(['.', '--preview', 'feat', '--json'])).toEqual({ args: ['.', '--json'], preview: { name: 'feat' } });
    expect(takePreviewFlag(['--preview', '--json'])).toEqual({ args: ['--json'], preview: {} });
    expect(takePreviewFlag(['--preview'])).toEqual({ args: [], preview: {} });
    expect(takePreviewFlag(['--preview=feat-2', 'site'])).toEqual({ args: ['site'], preview: { name: 'feat-2' } });
    expect(takePreviewFlag(['site', '--json'])).toEqual({ args: ['site', '--json'] });
  });

  it('reads a following folder as the folder, not the name (--preview=<name> is never ambiguous)', () => {
    expect(takePreviewFlag(['--preview', 'site'])).toEqual({ args: ['site'], preview: {} });
    expect(takePreviewFlag(['--preview', 'Not_A_Name'])).toEqual({ args: ['Not_A_Name'], preview: {} });
  });

  it('refuses a --preview= value that is not a preview name', () => {
    expect(() => takePreviewFlag(['--preview=a--b'])).toThrow(UsageError);
    expect(() => takePreviewFlag(['--preview=Feat'])).toThrow(/not a preview name/);
    expect(() => takePreviewFlag(['--preview=\u001b[31m'])).toThrow(/\\u001b/);
  });
});
