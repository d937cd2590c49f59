import net from 'node:net';

/**
 * A loopback address other than 127.0.0.1, for a "remote" a tenant aims at: the outbound rule
 * refuses it unless the test allows it.
 */
export const REMOTE_HOST = '127.0.0.2';

/** A TCP server on {@link REMOTE_HOST}; `open` holds the connections it has not seen closed. */
export async function remote(onConnection: (socket: net.Socket) => void) {
  const open = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    open.add(socket);
    // Read (and drop) what comes, so the other side's close is seen.
    socket.resume();
    socket.on('error', () => undefined);
    socket.on('close', () => open.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, REMOTE_HOST, () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    open,
    connections: () => connections,
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
