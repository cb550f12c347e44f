import { Packet, createServer } from 'dns2';
import { freePort } from './process.js';

type Answer = { txt: string[][]; address?: string } | { rcode: number };

/**
 * A DNS server on 127.0.0.1 (UDP and TCP on one free port; dns2 truncates large UDP answers) that answers TXT questions from a table
 * the test sets: a name in the table answers its values (none: NOERROR with no answer, "NODATA"),
 * `fail(name)` answers SERVFAIL, any other name NXDOMAIN. Names are compared lower-case without a
 * final dot. Point the platform at it with `SLIPWAY_DNS_SERVERS=<server.address>`.
 */
export class TestDnsServer {
  private readonly table = new Map<string, Answer>();
  /** Every question asked, in order (lower-case). */
  readonly questions: string[] = [];

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    readonly address: string,
  ) {}

  static async start(): Promise<TestDnsServer> {
    // UDP and TCP on one port (a resolver retries a truncated answer over TCP at the same address):
    // a free TCP port, tried again (with a new server) should UDP be taken on it.
    for (let attempt = 1; ; attempt++) {
      const ref: { self?: TestDnsServer } = {};
      const server = createServer({
        udp: true,
        tcp: true,
        handle: (request, send) => {
          void send(ref.self ? ref.self.answer(request) : Packet.createErrorResponseFromRequest(request, 2));
        },
      });
      const port = await freePort();
      try {
        await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
        ref.self = new TestDnsServer(server, `127.0.0.1:${port}`);
        return ref.self;
      } catch (error) {
        await server.close().catch(() => undefined);
        if (attempt >= 5) throw error;
      }
    }
  }

  /** TXT values of `name`; a value given as an array is sent as several strings of one record. */
  setTxt(name: string, values: (string | string[])[]): void {
    const entry = this.table.get(key(name));
    this.table.set(key(name), { txt: values.map((v) => (Array.isArray(v) ? v : [v])), address: entry && 'address' in entry ? entry.address : undefined });
  }

  /**
   * `name` answers A with `address` (IPv4) and AAAA with nothing (an ACME server's HTTP-01 check
   * then comes to that address); its TXT values, if any, are kept.
   */
  setAddress(name: string, address: string): void {
    const entry = this.table.get(key(name));
    this.table.set(key(name), { txt: entry && 'txt' in entry ? entry.txt : [], address });
  }

  /** `name` answers SERVFAIL. */
  fail(name: string): void {
    this.table.set(key(name), { rcode: 2 });
  }

  /** `name` is unknown again (NXDOMAIN). */
  remove(name: string): void {
    this.table.delete(key(name));
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(request: Packet): Packet {
    const question = request.questions[0];
    if (!question) return Packet.createErrorResponseFromRequest(request, 1);
    const name = key(question.name);
    this.questions.push(name);
    const entry = this.table.get(name);
    if (!entry) return Packet.createErrorResponseFromRequest(request, 3);
    if ('rcode' in entry) return Packet.createErrorResponseFromRequest(request, entry.rcode);
    const response = Packet.createResponseFromRequest(request);
    if (question.type === Packet.TYPE.TXT) {
      for (const data of entry.txt)
        response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data } as unknown as Packet['answers'][number]);
    }
    if (question.type === Packet.TYPE.A && entry.address) {
      response.answers.push({
        name: question.name,
        type: Packet.TYPE.A,
        class: Packet.CLASS.IN,
        ttl: 1,
        address: entry.address,
      } as unknown as Packet['answers'][number]);
    }
    return response;
  }
}

function key(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
