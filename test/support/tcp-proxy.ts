import net from 'node:net';

/**
 * A TCP proxy between the application and a server (PostgreSQL) that a test can break the way
 * networks and servers break: `freeze()` stops forwarding in both directions (a hung server or
 * a partition: connections stay open, nothing arrives), `resume()` delivers what was held back,
 * `sever()` resets every open connection, and `close()` stops listening (unreachable).
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private frozen = false;
  private readonly flushes = new Set<() => void>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on `port` (0: any free port); the same port again after `close()`. */
  async listen(port = this.port): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  get connections(): number {
    return this.pairs.size;
  }

  freeze(): void {
    this.frozen = true;
  }

  /** Forwards again, first what was held back while frozen. */
  resume(): void {
    this.frozen = false;
    for (const flush of this.flushes) flush();
  }

  /** Resets every open connection (both sides see an abrupt end). */
  sever(): void {
    for (const [a, b] of this.pairs) {
      a.resetAndDestroy();
      b.resetAndDestroy();
    }
    this.pairs.clear();
  }

  /** Stops listening and severs every connection: the server is unreachable. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.sever();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    // A frozen proxy still accepts (a TCP handshake with a hung server succeeds), then holds
    // every byte back until resumed.
    const held: Array<[net.Socket, Buffer]> = [];
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (this.frozen) held.push([to, chunk]);
      else to.write(chunk);
    };
    const flush = () => {
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    };
    this.flushes.add(flush);
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const end = () => {
      this.pairs.delete(pair);
      this.flushes.delete(flush);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }
}
