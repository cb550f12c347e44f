import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import * as acme from 'acme-client';

/** Tokens of the HTTP-01 challenges in flight: `GET /.well-known/acme-challenge/<token>` answers its key authorization. */
export class ChallengeResponder {
  private readonly tokens = new Map<string, string>();

  static readonly PREFIX = '/.well-known/acme-challenge/';

  set(token: string, keyAuthorization: string): void {
    this.tokens.set(token, keyAuthorization);
  }

  delete(token: string): void {
    this.tokens.delete(token);
  }

  /** The key authorization for a request path, when it names a token in flight (nothing else is answered). */
  answer(path: string | undefined): string | undefined {
    if (!path?.startsWith(ChallengeResponder.PREFIX)) return undefined;
    const token = path.slice(ChallengeResponder.PREFIX.length);
    return /^[A-Za-z0-9_-]{1,256}$/.test(token) ? this.tokens.get(token) : undefined;
  }
}

export interface IssuedCertificate {
  key: Buffer;
  certificatePem: string;
}

export interface AcmeIssuerOptions {
  directoryUrl: string;
  email?: string;
  caFile?: string;
  accountKey: Buffer;
}

/**
 * One ACME account (its key kept by the CertStore) that orders a certificate for one host at a
 * time over HTTP-01 (`acme-client`). Every host gets a key of its own (ECDSA P-256). The terms of
 * service are agreed to on the operator's behalf: EDGE_HTTPS=acme is that choice (docs/guides/https.md).
 */
export class AcmeIssuer {
  private constructor(
    private readonly client: acme.Client,
    private readonly email: string | undefined,
    private readonly challenges: ChallengeResponder,
  ) {}

  static async create(options: AcmeIssuerOptions, challenges: ChallengeResponder): Promise<AcmeIssuer> {
    // A private ACME server (a company CA, or the test's) may sign its directory with its own root.
    if (options.caFile) acme.axios.defaults.httpsAgent = new Agent({ ca: await readFile(options.caFile), keepAlive: true });
    acme.axios.defaults.timeout = 30_000;
    const client = new acme.Client({
      directoryUrl: options.directoryUrl,
      accountKey: options.accountKey,
      backoffAttempts: 10,
      backoffMin: 500,
      backoffMax: 10_000,
    });
    return new AcmeIssuer(client, options.email, challenges);
  }

  static createAccountKey(): Promise<Buffer> {
    return acme.crypto.createPrivateEcdsaKey('P-256');
  }

  async issue(host: string): Promise<IssuedCertificate> {
    const [key, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, await acme.crypto.createPrivateEcdsaKey('P-256'));
    const certificatePem = await this.client.auto({
      csr,
      email: this.email,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The CA checks the challenge itself; a self-check would go out to port 80 of whatever the
      // machine's resolver says, which is not always this edge (NAT, a private test network).
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        if (challenge.type !== 'http-01') throw new Error(`unexpected challenge ${challenge.type}`);
        this.challenges.set(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        this.challenges.delete(challenge.token);
      },
    });
    return { key, certificatePem };
  }
}
