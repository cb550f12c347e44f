import { randomBytes, X509Certificate, createPrivateKey } from 'node:crypto';
import { chmod, chown, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { grantWorkers, type NginxWorker } from '@slipway/data-plane';

/** A certificate on disk, as nginx is pointed at it. */
export interface StoredCertificate {
  host: string;
  certFile: string;
  keyFile: string;
  /** Key and certificate chain in one file (the nginx plane reads it at each handshake: one rename, never a mismatched pair). */
  bundleFile: string;
  notBefore: Date;
  notAfter: Date;
  serial: string;
}

/** A host name that may name a directory: lower-case ASCII labels, nothing else. */
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function isCertifiableHost(host: string): boolean {
  return HOST.test(host) && host !== 'localhost' && !host.endsWith('.localhost') && !/^[0-9.]+$/.test(host);
}

/**
 * The ACME account key and one key + certificate per host, under a root-only directory:
 * `<dir>` and `<dir>/certs/<host>` are 0700, every file 0600 (applications run as users of their
 * own and must not read them). With `worker` (the nginx plane's unprivileged workers, which load
 * `bundle.pem` at each handshake) the directories are 0710 root:<its group> and `bundle.pem`
 * 0640 root:<its group>: the workers read the bundle, nobody else gets in, and the account key,
 * `key.pem` and `cert.pem` stay root's alone. Files are written whole under a temporary name and
 * renamed into place, so nginx never reads half a file; a pair whose key does not match its
 * certificate (a crash between the two renames) is treated as missing.
 */
export class CertStore {
  constructor(
    readonly dir: string,
    private readonly worker?: NginxWorker,
  ) {}

  async init(): Promise<void> {
    await mkdir(join(this.dir, 'certs'), { recursive: true, mode: 0o700 });
    // mkdir keeps an existing directory's mode: make sure, every start.
    await this.protect(this.dir);
    await this.protect(join(this.dir, 'certs'));
    // Certificates kept before the workers ran unprivileged (0700/0600 root): let the workers read their bundles.
    if (this.worker) {
      for (const host of await this.hosts()) {
        await this.protect(this.hostDir(host));
        await this.shareBundle(join(this.hostDir(host), 'bundle.pem')).catch(() => undefined);
      }
    }
  }

  /** 0700 root, or 0710 root:<workers' group> when nginx's workers must get through. */
  private async protect(dir: string): Promise<void> {
    if (this.worker) await grantWorkers(dir, this.worker);
    else await chmod(dir, 0o700);
  }

  private async shareBundle(file: string): Promise<void> {
    if (!this.worker) return;
    await chown(file, 0, this.worker.gid);
    await chmod(file, 0o640);
  }

  /** The account key, made once (`create` is called only when there is none). */
  async accountKey(create: () => Promise<Buffer>): Promise<Buffer> {
    const file = join(this.dir, 'account.key');
    try {
      return await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const key = await create();
    await writePrivate(file, key);
    return key;
  }

  async save(host: string, key: Buffer, certificatePem: string): Promise<StoredCertificate> {
    const dir = this.hostDir(host);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await this.protect(dir);
    const parsed = describe(host, dir, certificatePem);
    await writePrivate(join(dir, 'key.pem'), key);
    await writePrivate(join(dir, 'cert.pem'), Buffer.from(certificatePem));
    await writePrivate(
      join(dir, 'bundle.pem'),
      Buffer.concat([key, Buffer.from(key.at(-1) === 10 ? '' : '\n'), Buffer.from(certificatePem)]),
      this.worker?.gid,
    );
    return parsed;
  }

  async load(host: string): Promise<StoredCertificate | undefined> {
    const dir = this.hostDir(host);
    try {
      const [pem, key] = await Promise.all([readFile(join(dir, 'cert.pem'), 'utf8'), readFile(join(dir, 'key.pem')), stat(join(dir, 'bundle.pem'))]);
      const parsed = describe(host, dir, pem);
      if (!new X509Certificate(pem).checkPrivateKey(createPrivateKey(key))) return undefined;
      return parsed;
    } catch {
      return undefined;
    }
  }

  async remove(host: string): Promise<void> {
    await rm(this.hostDir(host), { recursive: true, force: true });
  }

  /** Hosts with a directory on disk (whether or not its pair is usable). */
  async hosts(): Promise<string[]> {
    const names = await readdir(join(this.dir, 'certs')).catch(() => [] as string[]);
    return names.filter((name) => isCertifiableHost(name));
  }

  async exists(host: string): Promise<boolean> {
    return stat(this.hostDir(host)).then(
      () => true,
      () => false,
    );
  }

  private hostDir(host: string): string {
    if (!isCertifiableHost(host)) throw new Error(`not a host name a certificate is kept for: ${JSON.stringify(host)}`);
    return join(this.dir, 'certs', host);
  }
}

function describe(host: string, dir: string, pem: string): StoredCertificate {
  const leaf = new X509Certificate(pem);
  return {
    host,
    certFile: join(dir, 'cert.pem'),
    keyFile: join(dir, 'key.pem'),
    bundleFile: join(dir, 'bundle.pem'),
    notBefore: new Date(leaf.validFrom),
    notAfter: new Date(leaf.validTo),
    serial: leaf.serialNumber,
  };
}

/** 0600 from the first byte (O_EXCL on a fresh name), then renamed over the old file; `readerGid`: 0640, that group may read it. */
async function writePrivate(file: string, data: Buffer, readerGid?: number): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    if (readerGid !== undefined) {
      await handle.chown(0, readerGid);
      await handle.chmod(0o640);
    }
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, file);
}
